#!/usr/bin/env bash
# Organises the root package of waymark-workflow (dev.waymark.workflow) by concept (issue 30, part 5).
#
# Run from the root of a clean checkout (the lead runs it once on merged main):
#     bash .config/reorg-workflow.sh && mvn -B -q -ntp -DskipTests verify
#
# What it does, for every type of MAPPING below whose file exists in the root package:
#   1. git mv waymark-workflow/src/main/java/dev/waymark/workflow/T.java to the sub-package, and
#      rewrites its package line;
#   2. rewrites every qualified name dev.waymark.workflow.T (imports, javadoc links, FQNs) and every
#      path dev/waymark/workflow/T.java in the whole repository: Java (main and test, every module),
#      Markdown (README.md, docs/, CHANGELOG.md code blocks), XML and properties files;
#   3. adds the imports that the same-package references used to make unnecessary: in files of
#      package dev.waymark.workflow (main and test code) for moved types, in moved files for the types
#      left in the root and for types moved to other sub-packages;
#   4. exports (and opens to Jackson) each new sub-package in waymark-workflow's module-info.java.
# Types not in MAPPING stay in the root: the entry types (Workflow, WorkflowEngine, WorkflowClient,
# WorkflowContext, WorkflowRegistry, WorkflowCodec, WorkflowHandle, WorkflowCollector, WorkflowNames,
# StepAction) and any type added after this script was written. A type of MAPPING that does not exist
# is skipped with a note. The script is idempotent only in the sense that a second run finds nothing
# left to move; run it on a clean tree and review `git status` before committing.
set -euo pipefail

ROOT_DIR=waymark-workflow/src/main/java/dev/waymark/workflow
if [[ ! -d $ROOT_DIR ]]; then
    echo "run from the repository root (no $ROOT_DIR here)" >&2
    exit 1
fi

# type -> sub-package of dev.waymark.workflow
MAPPING='
Awakeable awakeable
AwakeableInfo awakeable
AwakeableOutcome awakeable
AwakeableCancelledException awakeable
AwakeableFailedException awakeable
ChildHandle child
ChildWorkflowCancelledException child
ChildWorkflowFailedException child
CollectResult gc
CollectorListener gc
FinishedWorkflow gc
WorkflowListener listener
CompositeWorkflowListener listener
WorkflowStatus status
WorkflowInfo status
WorkflowDetails status
JournalEntry status
WorkflowOutcome status
CancelOutcome status
RetryOutcome status
Backpressure backpressure
WorkflowBacklog backpressure
WorkflowBackpressureException backpressure
WorkflowException exception
InvalidWorkflowInputException exception
UnknownWorkflowException exception
WorkflowStartConflictException exception
WorkflowLeaseLostException exception
StepDecodeException exception
WorkflowFailedException exception
WorkflowCancelledException exception
WorkflowConfigException exception
'

MAP_FILE=$(mktemp)
trap 'rm -f "$MAP_FILE"' EXIT
while read -r type sub; do
    [[ -z ${type:-} ]] && continue
    if [[ -f $ROOT_DIR/$type.java ]]; then
        mkdir -p "$ROOT_DIR/$sub"
        git mv "$ROOT_DIR/$type.java" "$ROOT_DIR/$sub/$type.java"
        sed -i "s/^package dev\.waymark\.workflow;/package dev.waymark.workflow.$sub;/" "$ROOT_DIR/$sub/$type.java"
        echo "$type $sub" >> "$MAP_FILE"
    else
        echo "reorg-workflow: $type not in the root package, skipped" >&2
    fi
done <<< "$MAPPING"

python3 - "$MAP_FILE" "$ROOT_DIR" <<'PY'
import os
import re
import subprocess
import sys

map_file, root_dir = sys.argv[1], sys.argv[2]
moved = dict(line.split() for line in open(map_file) if line.strip())
if not moved:
    sys.exit(0)
files = subprocess.check_output(["git", "ls-files", "-z"], text=True).split("\0")
texts = [f for f in files if f and os.path.isfile(f)
         and f.endswith((".java", ".md", ".xml", ".properties", ".txt", ".sh", ".sql"))]
root_types = sorted(f[:-5] for f in os.listdir(root_dir) if f.endswith(".java") and f != "package-info.java")
names = "|".join(sorted(moved, key=len, reverse=True))
qualified = re.compile(r"\bdev\.waymark\.workflow\.(" + names + r")\b")
path = re.compile(r"\bdev/waymark/workflow/(" + names + r")\.java\b")

def imports_needed(text, pkg, candidates):
    """Single-type imports for the candidates (simple name -> package) used in text without one."""
    body = re.sub(r"^(package|import) .*$", "", text, flags=re.M)
    body_code = re.sub(r'"(?:\\.|[^"\\])*"', '""', body)  # string literals do not need imports
    out = []
    for simple, owner in candidates.items():
        if owner == pkg:
            continue
        if re.search(r"^import (static )?[\w.]+\." + simple + r";", text, flags=re.M):
            continue
        if re.search(r"\b(class|interface|record|enum)\s+" + simple + r"\b", body_code):
            continue  # a type of that name declared here
        if re.search(r"(?<![\w.])" + simple + r"\b", body_code):
            out.append(owner + "." + simple)
    return out

def add_imports(text, imports):
    if not imports:
        return text
    lines = text.split("\n")
    first = next((i for i, l in enumerate(lines) if l.startswith("import ") and not l.startswith("import static")), None)
    if first is None:
        pkg_line = next(i for i, l in enumerate(lines) if l.startswith("package "))
        lines[pkg_line + 1:pkg_line + 1] = [""] + ["import %s;" % i for i in sorted(imports)]
        return "\n".join(lines)
    end = first
    while end < len(lines) and lines[end].startswith("import ") and not lines[end].startswith("import static"):
        end += 1
    block = sorted(set(lines[first:end] + ["import %s;" % i for i in imports]), key=lambda l: l.rstrip(";"))
    lines[first:end] = block
    return "\n".join(lines)

new_pkg = {t: "dev.waymark.workflow." + s for t, s in moved.items()}
all_types = {t: "dev.waymark.workflow" for t in root_types}
all_types.update(new_pkg)
for f in texts:
    text = open(f, encoding="utf-8").read()
    new = qualified.sub(lambda m: "dev.waymark.workflow." + moved[m.group(1)] + "." + m.group(1), text)
    new = path.sub(lambda m: "dev/waymark/workflow/" + moved[m.group(1)] + "/" + m.group(1) + ".java", new)
    if f.endswith(".java"):
        m = re.search(r"^package ([\w.]+);", new, flags=re.M)
        pkg = m.group(1) if m else ""
        if pkg == "dev.waymark.workflow":
            new = add_imports(new, imports_needed(new, pkg, new_pkg))
        elif pkg.startswith("dev.waymark.workflow.") and os.path.basename(f)[:-5] in moved \
                and f.startswith(root_dir + "/"):
            new = add_imports(new, imports_needed(new, pkg, all_types))
        if f.endswith("module-info.java") and "module dev.waymark.workflow" in new:
            for sub in sorted(set(moved.values())):
                p = "dev.waymark.workflow." + sub
                if "exports " + p + ";" not in new:
                    new = new.replace("    exports dev.waymark.workflow;\n",
                                      "    exports dev.waymark.workflow;\n    exports " + p + ";\n", 1)
                if "opens " + p + " " not in new:
                    new = new.replace("    opens dev.waymark.workflow to com.fasterxml.jackson.databind;\n",
                                      "    opens dev.waymark.workflow to com.fasterxml.jackson.databind;\n"
                                      "    opens " + p + " to com.fasterxml.jackson.databind;\n", 1)
    if new != text:
        open(f, "w", encoding="utf-8").write(new)
PY
echo "reorg-workflow: moved $(wc -l < "$MAP_FILE") types; now run: mvn -B -q -ntp -DskipTests verify"
