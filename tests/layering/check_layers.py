#!/usr/bin/env python3
"""Fails on any #include that reaches above its layer (src/layers.txt).

A file in src/<layer>/ may include its own layer's headers and those of the layers the table
lets it use; src/main.cc may include anything. A header the table names `private` is included
only from the layers it lists (server/server.h: command handlers reach the server's components
through CommandContext, never the Server class itself). Every folder of src/ must be a layer. There
are no exceptions: a subsystem that needs something of a higher layer declares an interface
in its own folder, which the higher layer implements.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def read_layers(path):
    layers = {}
    private = {}
    for line in path.read_text().splitlines():
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        if line[0] == 'private':
            private[line[1]] = set(line[2:])
        else:
            layers[line[0]] = set(line[1:])
    return layers, private


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', default=str(pathlib.Path(__file__).resolve().parents[2]))
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    src = root / 'src'
    layers, private = read_layers(src / 'layers.txt')
    problems = []
    for folder in sorted(p.name for p in src.iterdir() if p.is_dir()):
        if folder not in layers:
            problems.append(f'src/{folder}/ is not a layer of src/layers.txt')
    for name, deps in layers.items():
        for dep in deps:
            if dep not in layers or list(layers).index(dep) >= list(layers).index(name):
                problems.append(f'layers.txt: {name} may use {dep}, which is not below it')
    for path in sorted(src.rglob('*')):
        if path.suffix not in ('.h', '.cc') or path.parent == src:
            continue
        rel = path.relative_to(root).as_posix()
        layer = path.relative_to(src).parts[0]
        allowed = layers.get(layer, set()) | {layer}
        for included in INCLUDE.findall(path.read_text(errors='replace')):
            if included in private and layer not in private[included]:
                problems.append(f'{rel}: includes "{included}", private to '
                                f'{", ".join(sorted(private[included]))}')
                continue
            target = included.split('/', 1)[0]
            if '/' not in included or target in allowed:
                continue
            if target not in layers and target != 'vireo':
                continue  # not one of ours (a system header in quotes)
            if target == 'vireo' and 'server' in allowed:
                continue  # the embedding API sits beside the server
            problems.append(f'{rel}: includes "{included}", above layer {layer}')
    for problem in problems:
        print(problem)
    if problems:
        print(f'0 passed, {len(problems)} failed')
        return 1
    print('1 passed, 0 failed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
