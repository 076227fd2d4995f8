#!/usr/bin/env python3
"""Checks kvstore's include rule: a module under src/ includes only itself and the modules below it.

Usage: scripts/check_layers.py [SRC_DIR]      (default: src/ beside this script)
       scripts/check_layers.py --self-test     (shows that a violation is caught)

Every `#include "module/..."` in src/<module>/ (tests included) must name the module itself or
one that ALLOWED lists for it. A directory under src/ that ALLOWED does not name fails too, so a
new module is placed in the layering when it is added. Exit status 1 and one line per violation
on failure; 0 and a summary line otherwise.
"""
import os
import re
import sys
import tempfile

# What each module may include, besides itself. The layering (README.md, Layout):
#   common -> resp, net, store -> transport, cmd, persist, script -> repl -> server
# (acl sits on cmd and below; only server uses it)
# (repl uses cmd for the replies of the replication commands it runs, never script).
# (cluster sits beside repl, on everything below it but script and acl; only server uses it)
ALLOWED = {
    "common": set(),
    "resp": {"common"},
    "net": {"common"},
    "store": {"common"},
    "transport": {"common", "net"},
    "cmd": {"common", "resp", "store"},
    "acl": {"common", "resp", "store", "cmd"},
    "persist": {"common", "store"},
    "script": {"common", "resp"},
    "repl": {"common", "resp", "net", "store", "cmd", "persist", "transport"},
    "cluster": {"common", "resp", "net", "store", "cmd", "persist", "transport", "repl"},
    "server": {"common", "resp", "net", "store", "transport", "cmd", "acl", "persist", "script",
               "repl", "cluster"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/[^"]*"')
SOURCE_EXT = (".h", ".cc", ".cpp", ".hpp")


def check(src):
    """Returns (violations, files checked)."""
    bad = []
    files = 0
    for module in sorted(os.listdir(src)):
        top = os.path.join(src, module)
        if not os.path.isdir(top):
            continue
        if module not in ALLOWED:
            bad.append(f"src/{module}/: a module the layering does not place (add it to ALLOWED "
                       f"in scripts/check_layers.py and to README.md's Layout)")
            continue
        for root, _, names in os.walk(top):
            for name in sorted(names):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(root, name)
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target == module or target in ALLOWED[module]:
                            continue
                        if target not in ALLOWED:
                            continue  # not a module of ours (a third-party directory)
                        rel = os.path.relpath(path, os.path.dirname(src))
                        bad.append(f"{rel}:{lineno}: {module} may not include {target} "
                                   f"({line.strip()})")
    return bad, files


def self_test():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        for module in ("common", "repl", "server"):
            os.makedirs(os.path.join(src, module))
        with open(os.path.join(src, "server", "a.cc"), "w") as f:
            f.write('#include "repl/feed.h"\n#include "common/status.h"\n')
        bad, _ = check(src)
        if bad:
            print("self-test: a higher layer including a lower one was refused:", bad)
            return 1
        with open(os.path.join(src, "repl", "b.h"), "w") as f:
            f.write('#pragma once\n#include "server/server.h"\n')
        bad, _ = check(src)
        if len(bad) != 1 or "repl may not include server" not in bad[0]:
            print("self-test: repl including server was not reported:", bad)
            return 1
        os.makedirs(os.path.join(src, "newmodule"))
        bad, _ = check(src)
        if not any("newmodule" in b for b in bad):
            print("self-test: an unplaced module was not reported:", bad)
            return 1
    print("self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    bad, files = check(src)
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} include(s) break the layering")
        return 1
    print(f"include layering holds: {files} files under {os.path.normpath(src)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
