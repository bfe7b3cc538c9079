#!/usr/bin/env python3
"""The layering check (scripts/check-layering.py) passes on the tree as it is and fails, naming
file, line and include, when a violation is planted in a copy of it."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(ROOT, "scripts", "check-layering.py")


def run_check(root):
    return subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True)


class LayeringCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A copy of the tree's sources and READMEs, where violations can be planted.
        cls.copy = tempfile.mkdtemp(prefix="layering-")
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
            os.makedirs(os.path.join(cls.copy, os.path.relpath(dirpath, ROOT)), exist_ok=True)
            for name in filenames:
                if name.endswith((".h", ".cc")) or name == "README.md":
                    src = os.path.join(dirpath, name)
                    dst = os.path.join(cls.copy, os.path.relpath(src, ROOT))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copyfile(src, dst)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.copy)

    def plant(self, rel, line):
        path = os.path.join(self.copy, rel)
        with open(path) as f:
            original = f.read()
        def restore():
            with open(path, "w") as f:
                f.write(original)
        self.addCleanup(restore)
        with open(path, "a") as f:
            f.write(line + "\n")
        return original.count("\n") + 1

    def test_the_tree_passes(self):
        result = run_check(ROOT)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_the_copy_passes_before_anything_is_planted(self):
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_core_including_the_engine_fails(self):
        line = self.plant("core/quantity.cc", '#include "services/engine/tollgate_api.h"')
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 1)
        self.assertIn("core/quantity.cc:%d: includes services/engine/tollgate_api.h" % line,
                      result.stdout)

    def test_a_lower_layer_including_a_higher_one_fails(self):
        self.plant("services/engine/list_pages.cc", '#include "services/rpc/watch_hub.h"')
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 1)
        self.assertIn("includes services/rpc/watch_hub.h: services/engine may depend on",
                      result.stdout)

    def test_a_library_including_a_binary_or_an_adapter_fails(self):
        self.plant("services/manifest/json_util.cc", '#include "cmd/tollgate/cli_session.h"')
        self.plant("clients/cpp/grpc_admission_client.cc",
                   '#include "adapters/kube/job_controller.h"')
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 1)
        self.assertIn("nothing outside test/ and bench/ includes cmd/", result.stdout)
        self.assertIn("nothing outside test/ and bench/ includes adapters/", result.stdout)

    def test_a_header_named_alone_allows_only_itself(self):
        # clients/cpp may include services/api/metadata_keys.h, not the rest of services/api.
        self.plant("clients/cpp/connection.cc", '#include "services/api/metadata_keys.h"')
        self.assertEqual(run_check(self.copy).returncode, 0)
        self.plant("clients/cpp/connection.cc", '#include "services/api/api_codec.h"')
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 1)
        self.assertIn("includes services/api/api_codec.h: clients/cpp may depend on", result.stdout)

    def test_including_bench_fails_even_from_tests(self):
        self.plant("test/core/quantity_test.cc", '#include "bench/bench_util.h"')
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 1)
        self.assertIn("nothing outside bench/ includes bench/", result.stdout)

    def test_a_folder_without_a_rule_is_refused(self):
        os.makedirs(os.path.join(self.copy, "services", "newlib"), exist_ok=True)
        path = os.path.join(self.copy, "services", "newlib", "thing.h")
        with open(path, "w") as f:
            f.write("#pragma once\n")
        self.addCleanup(os.remove, path)
        result = run_check(self.copy)
        self.assertEqual(result.returncode, 2)
        self.assertIn("services/newlib/thing.h: no README.md with a 'May depend on:' line",
                      result.stdout)


if __name__ == "__main__":
    unittest.main()
