#!/usr/bin/env python3
"""Every fmt/spdlog format string in the tree indexes its arguments one way.

fmt throws "cannot switch from automatic to manual argument indexing" at run time for a string
that mixes {} and {0}; with C++17 nothing checks it at compile time. One such string in the
spend chart's budget line cost every study with a dollar budget its HTML report. This reads the
literal (adjacent literals joined, raw strings too) that starts each fmt::format, fmt::format_to
and spdlog call, and fails naming file and line for any that mixes the two.
"""
import os
import re
import sys

CALL = re.compile(r"\b(?:fmt::format|fmt::format_to|fmt::print|spdlog::(?:trace|debug|info|warn|"
                  r"error|critical|log))\s*\(")
LITERAL = re.compile(r'\s*(?:R"([^(\s]*)\((.*?)\)\1"|"((?:[^"\\\n]|\\.)*)")', re.S)
FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def format_string(text, at):
    """The literal that starts at `at` (after optional whitespace and one leading argument such
    as an iterator or a level), joined with the literals adjacent to it; None if there is none."""
    parts = []
    pos = at
    while True:
        m = LITERAL.match(text, pos)
        if not m:
            break
        parts.append(m.group(2) if m.group(2) is not None else m.group(3))
        pos = m.end()
    return "".join(parts) if parts else None


def mixed(fmt):
    auto = manual = False
    for m in FIELD.finditer(fmt):
        if m.group(1) is None:
            continue
        index = m.group(1).split(":", 1)[0]
        if index == "":
            auto = True
        elif index.isdigit():
            manual = True
    return auto and manual


def main(root):
    problems = []
    for folder in ("coordinator", "worker", "common", "search", "tests", "bench", "fuzz"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                text = open(path, encoding="utf-8", errors="replace").read()
                for call in CALL.finditer(text):
                    at = call.end()
                    fmt = format_string(text, at)
                    if fmt is None:  # a first argument before the string (level, iterator)
                        comma = text.find(",", at)
                        fmt = format_string(text, comma + 1) if comma >= 0 else None
                    if fmt is not None and mixed(fmt):
                        line = text.count("\n", 0, call.start()) + 1
                        problems.append(f"{os.path.relpath(path, root)}:{line}: format string "
                                        "mixes automatic {} and manual {N} argument indexing")
    for p in problems:
        print(p)
    print(f"format strings: {len(problems)} mixing automatic and manual indexing")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
