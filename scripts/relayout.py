#!/usr/bin/env python3
"""The 2026-11 layout change (issue 24) as data: which file moved where, and which namespace
each library took. Branches started before the change use it to follow the move:

    git merge main                       # git follows renamed files that the branch edited
    scripts/relayout.py rewrite FILE...  # include paths and qualified names in files the
                                         # branch added (or any file; it is idempotent)

`scripts/relayout.py move` performed the move itself (git mv + rewrite of every tracked file);
it is kept for the record and refuses to run once the old paths are gone.
"""

import os
import re
import subprocess
import sys

# Old path -> new path. Tests follow their sources (test/ mirrors the tree).
MOVES = {
    # common/: base utilities every layer above the core shares.
    "cmd/flags/command_line.h": "common/command_line.h",
    "cmd/flags/command_line.cc": "common/command_line.cc",
    "cmd/log/json_log.h": "common/json_log.h",
    "cmd/log/json_log.cc": "common/json_log.cc",
    "cmd/signals/stop_signals.h": "common/stop_signals.h",
    "cmd/signals/stop_signals.cc": "common/stop_signals.cc",
    "cmd/build_info/build_info.h": "common/build_info.h",
    "cmd/build_info/build_info.cc": "common/build_info.cc",
    "cmd/build_info/build_info_values.cc.in": "common/build_info_values.cc.in",
    "cmd/build_info/write_build_info.cmake": "common/write_build_info.cmake",
    "storage/atomic_file.h": "common/atomic_file.h",
    "storage/atomic_file.cc": "common/atomic_file.cc",
    "adapters/stop_signal.h": "common/stop_signal.h",
    "adapters/stop_signal.cc": "common/stop_signal.cc",
    # The wall clock sits beside the Clock interface and the simulated clock.
    "services/real_clock.h": "core/real_clock.h",
    # services/api/: the wire: codecs, validation, limits.
    "services/api_codec.h": "services/api/api_codec.h",
    "services/api_limits.h": "services/api/api_limits.h",
    "services/api_validation.h": "services/api/api_validation.h",
    "services/api_validation.cc": "services/api/api_validation.cc",
    "services/config_codec.h": "services/api/config_codec.h",
    "services/config_codec.cc": "services/api/config_codec.cc",
    "services/policy_codec.h": "services/api/policy_codec.h",
    "services/policy_codec.cc": "services/api/policy_codec.cc",
    "services/quota_codec.h": "services/api/quota_codec.h",
    "services/quota_codec.cc": "services/api/quota_codec.cc",
    "services/selector_codec.h": "services/api/selector_codec.h",
    "services/selector_codec.cc": "services/api/selector_codec.cc",
    "services/workload_codec.h": "services/api/workload_codec.h",
    "services/workload_codec.cc": "services/api/workload_codec.cc",
    "services/breakdown_codec.h": "services/api/breakdown_codec.h",
    "services/breakdown_codec.cc": "services/api/breakdown_codec.cc",
    # services/engine/: the executor, the API facade and what they keep.
    "services/admission_executor.h": "services/engine/admission_executor.h",
    "services/admission_executor.cc": "services/engine/admission_executor.cc",
    "services/executor_observer.h": "services/engine/executor_observer.h",
    "services/stored_workloads.h": "services/engine/stored_workloads.h",
    "services/stored_workloads.cc": "services/engine/stored_workloads.cc",
    "services/config_objects.h": "services/engine/config_objects.h",
    "services/config_objects.cc": "services/engine/config_objects.cc",
    "services/list_pages.h": "services/engine/list_pages.h",
    "services/list_pages.cc": "services/engine/list_pages.cc",
    "services/workload_uids.h": "services/engine/workload_uids.h",
    "services/workload_uids.cc": "services/engine/workload_uids.cc",
    "services/start_estimates.h": "services/engine/start_estimates.h",
    "services/start_estimates.cc": "services/engine/start_estimates.cc",
    "services/tollgate_api.h": "services/engine/tollgate_api.h",
    "services/tollgate_api.cc": "services/engine/tollgate_api.cc",
    "services/tollgate_api_controls.cc": "services/engine/tollgate_api_controls.cc",
    "services/tollgate_api_internal.h": "services/engine/tollgate_api_internal.h",
    "services/state_keys.h": "services/engine/state_keys.h",
    "services/admission_metrics.h": "services/engine/admission_metrics.h",
    "services/admission_metrics.cc": "services/engine/admission_metrics.cc",
    # services/rpc/: gRPC services, the access gate, Watch streams, interceptors.
    "services/grpc_services.h": "services/rpc/grpc_services.h",
    "services/grpc_services.cc": "services/rpc/grpc_services.cc",
    "services/grpc_status.h": "services/rpc/grpc_status.h",
    "services/grpc_status.cc": "services/rpc/grpc_status.cc",
    "services/access_gate.h": "services/rpc/access_gate.h",
    "services/access_gate.cc": "services/rpc/access_gate.cc",
    "services/scheduler_audit.h": "services/rpc/scheduler_audit.h",
    "services/scheduler_audit.cc": "services/rpc/scheduler_audit.cc",
    "services/store_identity_interceptor.h": "services/rpc/store_identity_interceptor.h",
    "services/store_identity_interceptor.cc": "services/rpc/store_identity_interceptor.cc",
    "services/watch_hub.h": "services/rpc/watch_hub.h",
    "services/watch_hub.cc": "services/rpc/watch_hub.cc",
    "services/grpc_metrics_interceptor.h": "services/rpc/grpc_metrics_interceptor.h",
    "services/grpc_metrics_interceptor.cc": "services/rpc/grpc_metrics_interceptor.cc",
    "cmd/tollgated/admin_service.h": "services/rpc/admin_service.h",
    "cmd/tollgated/admin_service.cc": "services/rpc/admin_service.cc",
    "cmd/tollgated/info_service.h": "services/rpc/info_service.h",
    "cmd/tollgated/info_service.cc": "services/rpc/info_service.cc",
    # services/manifest/: Kueue YAML and every job translator.
    "adapters/kube/admission_translator.h": "services/manifest/admission_translator.h",
    "adapters/kube/admission_translator.cc": "services/manifest/admission_translator.cc",
    "adapters/kube/job_translator.h": "services/manifest/job_translator.h",
    "adapters/kube/job_translator.cc": "services/manifest/job_translator.cc",
    "adapters/kube/json_util.h": "services/manifest/json_util.h",
    "adapters/kube/json_util.cc": "services/manifest/json_util.cc",
    "adapters/kube/kube_resource.h": "services/manifest/kube_resource.h",
    "adapters/kube/pod_translator.h": "services/manifest/pod_translator.h",
    "adapters/kube/pod_translator.cc": "services/manifest/pod_translator.cc",
    "adapters/kube/pytorchjob_translator.h": "services/manifest/pytorchjob_translator.h",
    "adapters/kube/pytorchjob_translator.cc": "services/manifest/pytorchjob_translator.cc",
    "adapters/kube/rayjob_translator.h": "services/manifest/rayjob_translator.h",
    "adapters/kube/rayjob_translator.cc": "services/manifest/rayjob_translator.cc",
    "adapters/kube/workload_translator.h": "services/manifest/workload_translator.h",
    "adapters/kube/workload_translator.cc": "services/manifest/workload_translator.cc",
    "cmd/tollgate/manifest_input.h": "services/manifest/manifest_input.h",
    "cmd/tollgate/manifest_input.cc": "services/manifest/manifest_input.cc",
    # services/sim/: admission scenarios and trace replay.
    "services/manifest/scenario_parser.h": "services/sim/scenario_parser.h",
    "services/manifest/scenario_parser.cc": "services/sim/scenario_parser.cc",
    "cmd/tollgate/scenario_runner.h": "services/sim/scenario_runner.h",
    "cmd/tollgate/scenario_runner.cc": "services/sim/scenario_runner.cc",
    "services/simulation/estimate_accuracy.h": "services/sim/estimate_accuracy.h",
    "services/simulation/estimate_accuracy.cc": "services/sim/estimate_accuracy.cc",
    "services/simulation/replay_report.h": "services/sim/replay_report.h",
    "services/simulation/replay_report.cc": "services/sim/replay_report.cc",
    "services/simulation/trace_reader.h": "services/sim/trace_reader.h",
    "services/simulation/trace_reader.cc": "services/sim/trace_reader.cc",
    "services/simulation/trace_replay.h": "services/sim/trace_replay.h",
    "services/simulation/trace_replay.cc": "services/sim/trace_replay.cc",
    # clients/cpp/: the C++ client of tollgated.
    "adapters/admission_client.h": "clients/cpp/admission_client.h",
    "adapters/grpc_admission_client.h": "clients/cpp/grpc_admission_client.h",
    "adapters/grpc_admission_client.cc": "clients/cpp/grpc_admission_client.cc",
    # Tests follow their sources.
    "test/cmd/flags/command_line_test.cc": "test/common/command_line_test.cc",
    "test/cmd/tollgated/admin_service_test.cc": "test/services/rpc/admin_service_test.cc",
    "test/services/codec_test_support.h": "test/services/api/codec_test_support.h",
    "test/services/config_codec_test.cc": "test/services/api/config_codec_test.cc",
    "test/services/workload_codec_test.cc": "test/services/api/workload_codec_test.cc",
    "test/services/admission_executor_test.cc": "test/services/engine/admission_executor_test.cc",
    "test/services/admission_metrics_test.cc": "test/services/engine/admission_metrics_test.cc",
    "test/services/config_objects_test.cc": "test/services/engine/config_objects_test.cc",
    "test/services/executor_fixture.h": "test/services/engine/executor_fixture.h",
    "test/services/executor_fixture.cc": "test/services/engine/executor_fixture.cc",
    "test/services/list_pages_test.cc": "test/services/engine/list_pages_test.cc",
    "test/services/start_estimates_test.cc": "test/services/engine/start_estimates_test.cc",
    "test/services/tollgate_api_controls_test.cc": "test/services/engine/tollgate_api_controls_test.cc",
    "test/services/tollgate_api_test.cc": "test/services/engine/tollgate_api_test.cc",
    "test/services/manifest/scenario_parser_test.cc": "test/services/sim/scenario_parser_test.cc",
    "test/services/simulation/estimate_accuracy_test.cc": "test/services/sim/estimate_accuracy_test.cc",
    "test/services/simulation/replay_report_test.cc": "test/services/sim/replay_report_test.cc",
    "test/services/simulation/trace_reader_test.cc": "test/services/sim/trace_reader_test.cc",
    "test/services/simulation/trace_replay_test.cc": "test/services/sim/trace_replay_test.cc",
    "test/adapters/kube/admission_translator_test.cc": "test/services/manifest/admission_translator_test.cc",
    "test/adapters/kube/job_translator_test.cc": "test/services/manifest/job_translator_test.cc",
    "test/adapters/kube/pod_requests_paths_test.cc": "test/services/manifest/pod_requests_paths_test.cc",
    "test/adapters/kube/pod_translator_test.cc": "test/services/manifest/pod_translator_test.cc",
    "test/adapters/kube/pytorchjob_translator_test.cc": "test/services/manifest/pytorchjob_translator_test.cc",
    "test/adapters/kube/rayjob_translator_test.cc": "test/services/manifest/rayjob_translator_test.cc",
}

# The namespace each destination folder's library uses.
FOLDER_NAMESPACE = {
    "common": "tollgate::common",
    "core": "tollgate::core",
    "services/api": "tollgate::api",
    "services/engine": "tollgate::engine",
    "services/rpc": "tollgate::rpc",
    "services/manifest": "tollgate::manifest",
    "services/sim": "tollgate::sim",
    "services/ha": "tollgate::ha",
    "clients/cpp": "tollgate::client",
    "adapters/kube": "tollgate::kube",
}

# Old namespace spellings that map to one new namespace whatever the symbol.
NAMESPACE_RENAMES = [
    ("services::codec", "api::codec"),
    ("services::api_internal", "engine::api_internal"),
    ("services::ha", "ha"),
    ("adapters::kube::testing", "kube::testing"),
    ("adapters::kube", "kube"),
    ("cmd", "common"),
    ("build_info", "common"),
    ("scenario", "sim"),
    ("simulation", "sim"),
    ("yaml", "manifest"),
]

# Namespaces that split: `services::X` goes where X's header went (api, engine or rpc), and
# likewise for the translators of `adapters::kube`, the client of `adapters` and
# `storage::AtomicFile`. The old namespace of a moved header, by its old folder:
def old_namespace(old_path):
    folder = os.path.dirname(old_path)
    return {"services": "services", "adapters/kube": "adapters::kube", "adapters": "adapters",
            "storage": "storage"}.get(folder)


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def declared_symbols(header_text):
    """Names a header declares at namespace scope (unindented), good enough for our headers."""
    names = set()
    for line in header_text.splitlines():
        m = re.match(r"(?:class|struct|enum class|enum|union)\s+(?:ABSL_\w+\s+)?(\w+)", line)
        if m:
            names.add(m.group(1))
            continue
        m = re.match(r"using\s+(\w+)\s*=", line)
        if m:
            names.add(m.group(1))
            continue
        m = re.match(r"(?:inline\s+)?constexpr\s+[\w:<>]+\s+(\w+)", line)
        if m:
            names.add(m.group(1))
            continue
        m = re.match(r"(?:inline\s+|ABSL_MUST_USE_RESULT\s+)*[\w:<>,\s\*&]+?[\s\*&](\w+)\(", line)
        if m and m.group(1) not in ("if", "for", "while", "return"):
            names.add(m.group(1))
    return names


def symbol_namespaces(root):
    """{old namespace: {symbol: new namespace}} for the namespaces that split."""
    table = {}
    for old, new in MOVES.items():
        old_ns = old_namespace(old)
        ns = FOLDER_NAMESPACE.get(os.path.dirname(new))
        path = os.path.join(root, new)
        if not new.endswith(".h") or old_ns is None or ns is None or not os.path.exists(path):
            continue
        with open(path) as f:
            for name in declared_symbols(f.read()):
                table.setdefault(old_ns, {}).setdefault(name, ns.split("::", 1)[1])
    return table


def rewrite_text(text, symbols):
    # Include paths and other path mentions (CMake, docs, scripts).
    for old, new in MOVES.items():
        text = re.sub(r'(?<![\w/.])' + re.escape(old) + r'(?![\w.])', new, text)
    # Split namespaces first: services::TollgateApi -> engine::TollgateApi. Longest old
    # namespace first, so adapters::kube::JobTranslator is not read as adapters::kube.
    for old_ns in sorted(symbols, key=len, reverse=True):
        def split(m, names=symbols[old_ns]):
            target = names.get(m.group(2))
            return m.group(0) if target is None else m.group(1) + target + "::" + m.group(2)
        text = re.sub(r"(\btollgate::|(?<![\w:]))" + re.escape(old_ns) + r"::(\w+)\b(?!::)", split,
                      text)
    # Whole-namespace renames, qualified uses and declarations.
    for old, new in NAMESPACE_RENAMES:
        text = re.sub(r"(\btollgate::|(?<![\w:]))" + re.escape(old) + r"::", r"\g<1>" + new + "::",
                      text)
        text = re.sub(r"\bnamespace tollgate::" + re.escape(old) + r"\b", "namespace tollgate::" + new,
                      text)
    return text


def declare_namespace(path, text):
    """A moved file's own `namespace tollgate::X {` becomes its folder's namespace. Runs after
    rewrite_text, so only the namespaces that split (and plain `tollgate`) are left to change;
    detail namespaces below them (api::codec, engine::api_internal) stay."""
    folder = os.path.dirname(path)
    if folder.startswith("test/"):
        folder = folder[len("test/"):]
    ns = FOLDER_NAMESPACE.get(folder)
    if ns is None:
        return text
    old = r"tollgate(?:::(?:services|adapters|kube|storage))?"
    text = re.sub(r"^namespace " + old + r" \{", "namespace " + ns + " {", text, flags=re.M)
    return re.sub(r"^\}  // namespace " + old + r"$", "}  // namespace " + ns, text, flags=re.M)


def tracked_text_files(root):
    files = sh("git", "-C", root, "ls-files").split("\n")
    exts = (".h", ".cc", ".in", ".cmake", ".txt", ".md", ".py", ".sh", ".yaml", ".json", ".proto")
    return [f for f in files if f and (f.endswith(exts) or f.startswith(".ci/"))
            and not f.startswith("test/scenarios/") and f != "scripts/relayout.py"]


def rewrite_files(root, paths, moved_new=frozenset()):
    symbols = symbol_namespaces(root)
    for rel in paths:
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        new_text = rewrite_text(text, symbols)
        if rel in moved_new and rel.endswith((".h", ".cc")):
            new_text = declare_namespace(rel, new_text)
        if new_text != text:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(new_text)


def move(root):
    missing = [old for old in MOVES if not os.path.exists(os.path.join(root, old))]
    if missing:
        sys.exit("relayout: the move is done already (missing: %s)" % missing[0])
    for old, new in MOVES.items():
        os.makedirs(os.path.join(root, os.path.dirname(new)), exist_ok=True)
        sh("git", "-C", root, "mv", old, new)
    rewrite_files(root, tracked_text_files(root), frozenset(MOVES.values()))


def main(argv):
    root = sh("git", "rev-parse", "--show-toplevel").strip()
    if len(argv) >= 2 and argv[1] == "move":
        move(root)
    elif len(argv) >= 2 and argv[1] == "rewrite":
        rels = [os.path.relpath(os.path.abspath(p), root) for p in argv[2:]]
        rewrite_files(root, rels, frozenset(r for r in rels if r in MOVES.values()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
