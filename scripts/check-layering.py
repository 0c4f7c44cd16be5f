#!/usr/bin/env python3
"""Checks that mp's layers form one line, and prints the graph it checked.

The compiler's layers, lowest first; a layer may use only layers below it:

    Support -> Dialect -> Import | Precision -> Transforms -> Conversion
      -> Codegen/Common -> Codegen/CPU | Codegen/CUDA -> Pipelines
      -> Execution | Compile -> CAPI | tools

Layers on one rung (Import and Precision, ...) may not use each other. The
runtime (runtime/) is C/C++ without MLIR: any compiler layer may use its
public headers, it uses nothing of the compiler, LLVM or MLIR, and its
files (a header with its source) form no include cycle.

Edges come from `#include "..."` lines (lib/, include/, tools/, runtime/)
and from the mp targets each CMakeLists.txt links (LINK_LIBS of
add_mlir_library, target_link_libraries). Exit status 1 names every edge
that runs up the line, sideways or into a cycle.

    scripts/check-layering.py [--root DIR]
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

RUNGS = [
    ["Support"],
    ["Dialect"],
    ["Import", "Precision"],
    ["Transforms"],
    ["Conversion"],
    ["Codegen/Common"],
    ["Codegen/CPU", "Codegen/CUDA"],
    ["Pipelines"],
    ["Execution", "Compile"],
    ["CAPI", "tools"],
]
RANK = {layer: i for i, rung in enumerate(RUNGS) for layer in rung}
RUNTIME = "runtime"
SOURCE_SUFFIXES = {".h", ".cpp", ".c", ".inc", ".def"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_path(rel: Path):
    """The layer a file of the tree belongs to, or None."""
    parts = rel.parts
    if parts[0] == "runtime":
        return RUNTIME
    if parts[0] == "tools":
        return "tools"
    if parts[0] == "include" and len(parts) > 1 and parts[1] == "mp-c":
        return "CAPI"
    if parts[0] == "lib" and len(parts) > 1:
        rest = parts[1:]
    elif parts[0] == "include" and len(parts) > 2 and parts[1] == "mp":
        rest = parts[2:]
    else:
        return None
    if rest[0] == "Codegen" and len(rest) > 1:
        return "Codegen/" + rest[1]
    return rest[0] if rest[0] in RANK else None


def layer_of_include(header: str, runtime_headers: set):
    """The layer an #include "..." names, or None (system, generated, local)."""
    if header.startswith("mp-c/"):
        return "CAPI"
    if header in runtime_headers:
        return RUNTIME
    if header.startswith("mp/"):
        return layer_of_path(Path("include") / header)
    return None


def include_edges(root: Path):
    """(from, to, where) for every #include between layers."""
    runtime_headers = {
        str(p.relative_to(root / "runtime" / "include"))
        for p in (root / "runtime" / "include").rglob("*.h")
    }
    edges = []
    for top in ("lib", "include", "tools", "runtime"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root)
            src = layer_of_path(rel)
            if src is None:
                continue
            text = path.read_text(errors="replace")
            for m in INCLUDE.finditer(text):
                header = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                if src == RUNTIME and header.startswith(("mlir/", "llvm/")):
                    edges.append((src, "MLIR/LLVM", f"{rel}:{line}: {header}"))
                    continue
                dst = layer_of_include(header, runtime_headers)
                if dst is not None and dst != src:
                    edges.append((src, dst, f"{rel}:{line}: {header}"))
    return edges


def cmake_calls(text: str, name: str):
    """The argument lists of every call to `name` in CMake `text`."""
    for m in re.finditer(rf"\b{name}\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = re.sub(r"#[^\n]*", "", text[m.end() : i - 1])
        yield body.split()


def link_edges(root: Path):
    """(from, to, where) for every mp target linked across layers."""
    owner = {}  # target -> layer
    links = []  # (layer, target linked, where)
    for cmake in sorted(root.glob("**/CMakeLists.txt")):
        rel = cmake.relative_to(root)
        if rel.parts[0] not in ("lib", "tools", "runtime"):
            continue
        layer = layer_of_path(rel)
        if layer is None:
            continue
        text = cmake.read_text()
        for fn in ("add_mlir_library", "add_library", "add_mlir_tool", "add_executable"):
            for args in cmake_calls(text, fn):
                if args:
                    owner[args[0]] = layer
        for args in cmake_calls(text, "add_mlir_library"):
            if "LINK_LIBS" in args:
                tail = args[args.index("LINK_LIBS") + 1 :]
                links += [(layer, t, str(rel)) for t in tail if t not in ("PUBLIC", "PRIVATE")]
        for fn in ("target_link_libraries", "mlir_target_link_libraries"):
            for args in cmake_calls(text, fn):
                links += [
                    (layer, t, str(rel))
                    for t in args[1:]
                    if t not in ("PUBLIC", "PRIVATE", "INTERFACE")
                ]
    return [(src, owner[t], f"{where}: links {t}") for src, t, where in links if t in owner and owner[t] != src]


def runtime_cycles(root: Path):
    """Include cycles among runtime/lib's files (a header and its source are
    one node)."""
    graph = defaultdict(set)
    lib = root / "runtime" / "lib"
    for path in lib.glob("*"):
        if path.suffix not in SOURCE_SUFFIXES:
            continue
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            target = lib / m.group(1)
            if target.exists() and target.stem != path.stem:
                graph[path.stem].add(target.stem)
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return graph, cycles


def check(root: Path, out=sys.stdout) -> int:
    edges = include_edges(root) + link_edges(root)
    counts = defaultdict(lambda: [0, 0])
    errors = []
    for src, dst, where in edges:
        counts[(src, dst)][0 if "links" not in where else 1] += 1
        if dst == "MLIR/LLVM":
            errors.append(f"{where}: the runtime uses no MLIR or LLVM")
        elif src == RUNTIME:
            errors.append(f"{where}: the runtime uses the compiler's {dst}")
        elif dst == RUNTIME:
            continue
        elif RANK[dst] > RANK[src]:
            errors.append(f"{where}: {src} uses {dst}, which is above it")
        elif RANK[dst] == RANK[src]:
            errors.append(f"{where}: {src} uses {dst}, which is beside it")
    graph, cycles = runtime_cycles(root)
    for cycle in cycles:
        errors.append("runtime/lib include cycle: " + " -> ".join(cycle))

    order = {layer: i for i, layer in enumerate(sum(RUNGS, []) + [RUNTIME, "MLIR/LLVM"])}
    print("layers, lowest first: " + " -> ".join(" | ".join(r) for r in RUNGS), file=out)
    print("edges checked (includes, links):", file=out)
    for (src, dst), (inc, lnk) in sorted(counts.items(), key=lambda e: (order[e[0][0]], order[e[0][1]])):
        print(f"  {src:15} -> {dst:15} {inc:4} {lnk:3}", file=out)
    print("runtime/lib includes:", file=out)
    for node in sorted(n for n in graph if graph[n]):
        print(f"  {node} -> {', '.join(sorted(graph[node]))}", file=out)
    for e in errors:
        print("error: " + e, file=out)
    print(f"{len(edges)} edges, {len(errors)} error(s)", file=out)
    return 1 if errors else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sys.exit(check(args.root))


if __name__ == "__main__":
    main()
