"""Prints the PTX held by every gpu.binary of an MLIR module (read from
stdin, lowered with format=isa) as plain lines, each binary after a line
`// binary NAME for CHIP`, so that FileCheck can take one kernel entry at a
time (CHECK-LABEL: .entry NAME)."""

import re
import sys

text = sys.stdin.read()
for binary in re.finditer(r'gpu\.binary @(\S+)\s*(?:<[^>]*>\s*)?\[(.*?)\]\s*$', text, re.M):
    for obj in re.finditer(r'#gpu\.object<#nvvm\.target<[^>]*chip = "(\w+)"[^>]*>.*?assembly = "((?:[^"\\]|\\.)*)"',
                           binary.group(2)):
        ptx = re.sub(r'\\([0-9A-Fa-f]{2})', lambda m: chr(int(m.group(1), 16)), obj.group(2))
        ptx = ptx.replace('\\\\', '\\').replace('\\"', '"')
        print(f"// binary {binary.group(1)} for {obj.group(1)}")
        print(ptx)
