#!/usr/bin/env python3
"""What `make image-check` can prove of the image without Docker, from the files alone.

    scripts/image-static-check.py [--health-command FILE] [--image-env FILE --root DIR]

1. The build context: `.dockerignore` leaves out every build folder (`.build`, `.build-tsan`, ...)
   and `.git`, and keeps every file the Dockerfile's COPY sources name (read with Docker's
   rules: the last pattern that matches a path or a folder above it decides). Its size is
   printed.
2. docs/docker.md names every package the runtime stage installs, and every
   package it names is one the Dockerfile installs.
3. The HEALTHCHECK is in exec form (`CMD ["mishap", ...]`): its words are written to
   `--health-command FILE`, one a line, for image-check.sh to run against servers started as
   the image starts them, with the image's ENV written to `--image-env FILE` (`NAME=VALUE`
   lines, absolute paths moved under `--root`, a folder standing in for the image's `/`).

Exits 1 with the reasons when a check fails.
"""

import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
problems = []


def fail(message):
    problems.append(message)


def instructions(dockerfile):
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    result, current = [], ""
    for line in dockerfile.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        result.append((current + stripped).strip())
        current = ""
    if current:
        result.append(current.strip())
    return result


def pattern_regex(pattern):
    """Go's filepath.Match with Docker's `**`, as a regular expression over slash paths."""
    out, index = "", 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out += "(?:.*/)?"
            index += 3
            continue
        if pattern.startswith("**", index):
            out += ".*"
            index += 2
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                out += re.escape(char)
            else:
                body = pattern[index + 1:end].replace("\\", "\\\\")
                out += "[" + ("^" + body[1:] if body.startswith("^") else body) + "]"
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out += re.escape(pattern[index])
        else:
            out += re.escape(char)
        index += 1
    return re.compile("^" + out + "$")


def ignore_rules(text):
    """The patterns of a .dockerignore: (negated, regex, pattern), in order."""
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:].strip()
        line = os.path.normpath(line).lstrip("/")
        rules.append((negated, pattern_regex(line), line))
    return rules


def excluded(rules, path):
    """Whether Docker leaves `path` (relative, slashes) out of the context."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    result = False
    for negated, regex, _ in rules:
        if any(regex.match(prefix) for prefix in prefixes):
            result = not negated
    return result


def check_context(dockerfile_instructions):
    path = os.path.join(ROOT, ".dockerignore")
    if not os.path.exists(path):
        fail("there is no .dockerignore: `docker build .` sends every build folder (.build: hundreds of MB after make test)")
        return
    rules = ignore_rules(open(path).read())
    for folder in [".build", ".build-tsan", ".build-asan", ".build-bench", ".build-soak", ".git"]:
        if not excluded(rules, folder + "/debug/mishap"):
            fail(f".dockerignore does not leave out {folder}/")
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True, check=True).stdout.split("\n")
    tracked = [name for name in tracked if name]
    for instruction in dockerfile_instructions:
        words = shlex.split(instruction)
        if words[0].upper() not in ("COPY", "ADD") or any(word.startswith("--from") for word in words):
            continue
        for source in [word for word in words[1:-1] if not word.startswith("--")]:
            source = os.path.normpath(source)
            files = [name for name in tracked if name == source or name.startswith(source + "/")]
            if not files:
                fail(f"COPY {source}: no such file in the repository")
            for name in files:
                if excluded(rules, name):
                    fail(f".dockerignore leaves out {name}, which the Dockerfile copies (COPY {source})")
                    break
    # What `docker build .` would send now, folders no rule can bring back skipped whole.
    negations = [pattern for negated, _, pattern in rules if negated]
    size, count = 0, 0
    for folder, subfolders, names in os.walk(ROOT):
        relative = os.path.relpath(folder, ROOT)
        relative = "" if relative == "." else relative + "/"
        subfolders[:] = [name for name in subfolders
                         if not excluded(rules, relative + name) or any(p.startswith(relative + name + "/") for p in negations)]
        for name in names:
            if not excluded(rules, relative + name):
                size += os.path.getsize(os.path.join(folder, name))
                count += 1
    print(f"image-check: the build context (.dockerignore) is {count} files, {size / 1048576:.1f} MiB")


def installed(stage_instructions):
    """The packages `apt-get install` installs in a stage."""
    packages = []
    for instruction in stage_instructions:
        for command in re.split(r"&&|;", instruction):
            words = command.split()
            if "apt-get" in words and "install" in words:
                packages += [word for word in words[words.index("install") + 1:] if not word.startswith("-") and "=" not in word]
    return packages


def check_readme(stages):
    runtime = installed(stages[-1])
    everywhere = set(installed([instruction for stage in stages for instruction in stage]))
    readme = open(os.path.join(ROOT, "docs", "docker.md")).read()
    match = re.search(r"^# Docker\n(.*)", readme, re.S | re.M)
    if not match:
        fail("docs/docker.md has no '# Docker' page")
        return
    section = match.group(1)
    named = set(re.findall(r"`((?:lib|pkg-config)[A-Za-z0-9.+-]*)`", section))
    missing = [package for package in runtime if package not in named]
    for package in missing:
        fail(f"docs/docker.md does not name `{package}`, which the runtime image installs")
    for package in sorted(named - everywhere):
        fail(f"docs/docker.md names `{package}`, which the Dockerfile does not install")
    if not missing and named <= everywhere:
        print(f"image-check: docs/docker.md names the runtime image's packages: {' '.join(runtime)}")


def health_command(instruction):
    """The HEALTHCHECK's command, in exec form."""
    after = instruction.split(" CMD ", 1)
    if len(after) != 2:
        fail("the HEALTHCHECK has no CMD")
        return None
    try:
        words = json.loads(after[1])
    except ValueError:
        fail("the HEALTHCHECK's CMD is not in exec form ([\"mishap\", ...])")
        return None
    if not words or words[0] != "mishap":
        fail("the HEALTHCHECK does not run mishap")
        return None
    return words


def image_env(stage_instructions, root):
    """The runtime stage's ENV, absolute paths moved under `root`."""
    env = []
    for instruction in stage_instructions:
        words = shlex.split(instruction)
        if words[0].upper() != "ENV":
            continue
        pairs = words[1:] if all("=" in word for word in words[1:]) else [words[1] + "=" + " ".join(words[2:])]
        for pair in pairs:
            name, value = pair.split("=", 1)
            if value.startswith("/"):
                value = os.path.join(root, value.lstrip("/"))
            env.append(f"{name}={value}")
    return env


def main(arguments):
    options = dict(zip(arguments[::2], arguments[1::2]))
    dockerfile = instructions(open(os.path.join(ROOT, "Dockerfile")).read())
    stages = []
    for instruction in dockerfile:
        if instruction.upper().startswith("FROM "):
            stages.append([])
        elif stages:
            stages[-1].append(instruction)
    check_context(dockerfile)
    check_readme(stages)
    healthchecks = [instruction for instruction in stages[-1] if instruction.upper().startswith("HEALTHCHECK")]
    if len(healthchecks) != 1:
        fail("the runtime stage has no HEALTHCHECK")
    else:
        words = health_command(healthchecks[0])
        if words and "--health-command" in options:
            with open(options["--health-command"], "w") as out:
                out.write("\n".join(words) + "\n")
    if "--image-env" in options:
        with open(options["--image-env"], "w") as out:
            out.write("".join(line + "\n" for line in image_env(stages[-1], options["--root"])))
    for problem in problems:
        print(f"image-check: FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
