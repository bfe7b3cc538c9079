#!/usr/bin/env python3
"""The layering check (CONTRIBUTING.md): a file may include only its own folder and the folders
its folder's README allows, with their allowances in turn.

Every folder that holds C++ outside test/ and bench/ has a README.md with one line

    May depend on: services/engine, services/api, metrics (and gRPC)

Items that name a folder of the repository count (`proto` stands for the generated
`tollgate/v1/*.pb.h`, `proto/etcd` for `etcd/...`), and so do items that name one header (that
header only, and nothing it may include in turn: for a header of constants, say); anything else
on the line (third-party libraries, prose) is for the reader. What a folder may include is the
closure: its own folder, the folders and headers it names, and what those folders may include.
Besides:
  - nothing includes bench/, and nothing outside test/ and bench/ includes cmd/ or adapters/
    (those are the top of the tree);
  - test/ and bench/ may include anything else.

Exit status 0 when every include is allowed; 1 with one line per violation (file:line, the
include, and what the file's folder may depend on); 2 when a README line is missing or names a
folder that does not exist.

    scripts/check-layering.py [--root DIR]
"""

import argparse
import os
import re
import sys

SOURCE_EXTENSIONS = (".h", ".cc")
FREE_FOLDERS = ("test", "bench")  # may include anything but bench/ (test) or test/ helpers
TOP_OF_TREE = ("cmd", "adapters")  # only test/ and bench/ may include these
RULE = re.compile(r"^May depend on:(.*)$", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not d.startswith("build"))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def folder_of_include(root, include):
    """The repository folder an include names, or None for a third-party header."""
    if include.startswith("tollgate/v1/"):
        return "proto"
    if include.startswith("etcd/"):
        return "proto/etcd"
    folder = os.path.dirname(include)
    first = include.split("/", 1)[0]
    if "/" in include and os.path.isdir(os.path.join(root, first)):
        return folder
    return None


def rule_folder(root, folder, cache={}):
    """The nearest folder at or above `folder` whose README.md carries the rule."""
    key = (root, folder)
    if key not in cache:
        found = None
        probe = folder
        while probe:
            readme = os.path.join(root, probe, "README.md")
            if os.path.exists(readme) and RULE.search(open(readme, encoding="utf-8").read()):
                found = probe
                break
            probe = os.path.dirname(probe)
        cache[key] = found
    return cache[key]


def named_folders(root, folder):
    """The folders and single headers the README of `folder` allows, and the items that look
    like paths but name nothing."""
    text = open(os.path.join(root, folder, "README.md"), encoding="utf-8").read()
    line = RULE.search(text).group(1)
    items = re.split(r"[,;()]|\band\b", line)
    allowed, unknown = set(), []
    for item in items:
        item = item.strip().strip("`").strip().rstrip("/").rstrip(".")
        if not item or " " in item:
            continue  # prose or a library name with spaces
        if os.path.isdir(os.path.join(root, item)):
            allowed.add(item)
        elif item.endswith(".h") and os.path.isfile(os.path.join(root, item)):
            allowed.add(item)
        elif "/" in item:
            unknown.append(item)  # looks like a path: a typo would silently allow nothing
    return allowed, unknown


def allowed_closure(root, folder, memo):
    """`folder`, the folders its README names, and what those may include in turn."""
    if folder not in memo:
        memo[folder] = {folder}  # a cycle stops here instead of recursing forever
        allowed = {folder}
        for dep in named_folders(root, folder)[0]:
            allowed.add(dep)
            if dep.endswith(".h"):
                continue  # a header alone: what its folder may include is not implied
            dep_rule = rule_folder(root, dep)
            if dep_rule is not None:
                allowed |= allowed_closure(root, dep_rule, memo)
        memo[folder] = allowed
    return memo[folder]


def allows(allowed, target, include=None):
    """Whether `target` (a folder) is in or below an allowed folder, or `include` (the header
    itself) is an allowed header."""
    if include is not None and include in allowed:
        return True
    return any(target == a or target.startswith(a + "/") for a in allowed if not a.endswith(".h"))


def check(root):
    violations, problems = [], []
    memo = {}
    checked_rules = set()
    for rel in source_files(root):
        top = rel.split("/", 1)[0]
        folder = os.path.dirname(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        includes = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)]
        if top in FREE_FOLDERS:
            for line, inc in includes:
                target = folder_of_include(root, inc)
                if target and target.split("/", 1)[0] == "bench" and top != "bench":
                    violations.append("%s:%d: includes %s: nothing outside bench/ includes bench/"
                                      % (rel, line, inc))
            continue
        rule = rule_folder(root, folder)
        if rule is None:
            problems.append("%s: no README.md with a 'May depend on:' line in %s or above"
                            % (rel, folder or "."))
            continue
        if rule not in checked_rules:
            checked_rules.add(rule)
            for item in named_folders(root, rule)[1]:
                problems.append("%s/README.md: 'May depend on' names %s, which is not a folder"
                                % (rule, item))
        allowed = allowed_closure(root, rule, memo)
        for line, inc in includes:
            target = folder_of_include(root, inc)
            if target is None or allows({folder}, target):
                continue
            target_top = target.split("/", 1)[0]
            if target_top == "bench" or target_top == "test":
                violations.append("%s:%d: includes %s: only test/ and bench/ may include %s/"
                                  % (rel, line, inc, target_top))
            elif target_top in TOP_OF_TREE and not allows({rule}, target):
                violations.append("%s:%d: includes %s: nothing outside test/ and bench/ includes "
                                  "%s/" % (rel, line, inc, target_top))
            elif not allows(allowed, target, inc):
                violations.append("%s:%d: includes %s: %s may depend on %s" % (
                    rel, line, inc, rule, ", ".join(sorted(allowed - {rule})) or "nothing"))
    return violations, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    violations, problems = check(root)
    for p in problems:
        print(p)
    for v in violations:
        print(v)
    if problems:
        return 2
    if violations:
        print("layering: %d include(s) cross the rules of the folders' READMEs" % len(violations))
        return 1
    print("layering: every include is allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
