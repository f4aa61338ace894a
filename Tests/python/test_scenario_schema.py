"""docs/scenario.schema.json, the JSON Schema editors use for scenario files, against Mishap's own
loader: every scenario file the project ships or documents validates, and files the loader
refuses for a wrong key, type or value are refused by the schema too, at the same line and
column (`mishap validate` against the schema's first error, placed in the YAML text).

That every key the compiler accepts is in the schema, and no other, is checked in Swift, against
the compiler's own key lists (ScenarioSchemaTests).

Needs jsonschema and PyYAML (`make test` installs them when missing: scripts/python-test-deps.sh).
Run by `make test`:  python3 -m unittest discover -s Tests/python -v
MISHAP_BIN names another binary.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

try:
    import jsonschema
    import yaml  # noqa: F401 (mishap_yaml reads with it)
except ImportError as error:  # Said plainly rather than as a failure in every test.
    raise ImportError(f"{error}: the schema tests need jsonschema and PyYAML; scripts/python-test-deps.sh installs them") from error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mishap_yaml  # noqa: E402 (beside this file)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISHAP = os.environ.get("MISHAP_BIN", os.path.join(REPO, ".build", "debug", "mishap"))
SCHEMA_PATH = os.path.join(REPO, "docs", "scenario.schema.json")

# Files the loader refuses, each for one problem, which the schema must refuse at the same place.
REFUSED = {
    "unknown key in a response": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { stauts: 200, json: { ok: true } }
""",
    "unknown key in a rule": """\
endpoint: GET /a
rules:
  - name: ok
    respnd: { status: 200 }
    respond: { status: 200 }
""",
    "unknown key at the top of a file": """\
endpoint: GET /a
rule:
  - name: ok
    respond: { status: 200 }
rules:
  - name: ok
    respond: { status: 200 }
""",
    "unknown condition test": """\
endpoint: GET /a
rules:
  - name: ok
    when: { query: { q: { equal: x } } }
    respond: { status: 200 }
""",
    "unknown key in a list of endpoints": """\
endpoints:
  - endpoint: GET /a
    rules:
      - name: ok
        respond: { status: 200 }
    quotas: { limit: 1, window: 1s }
""",
    "an unknown range fault": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { text: abc, ranges: { fault: ignore } }
""",
    "an unknown key in ranges": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { text: abc, ranges: { etags: '"v1"' } }
""",
    "ranges that are false": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { text: abc, ranges: false }
""",
    "a status that is not a number": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { status: OK }
""",
    "hang that is not a boolean": """\
endpoint: GET /a
rules:
  - name: ok
    respond:
      status: 200
      hang: "yes"
""",
    "rules that are not a list": """\
endpoint: GET /a
rules:
  name: ok
  respond: { status: 200 }
""",
    "a delay that is not a duration": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { status: 200, delay: 3 seconds }
""",
    "a status out of range": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { status: 700 }
""",
    "a quoted status out of range": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { status: "99" }
""",
    "a misspelt fault": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { fault: rest }
""",
    "a misspelt fault in a cycle": """\
endpoint: GET /a
rules:
  - name: ok
    cycle:
      - { status: 200 }
      - { fault: truncate_chunked }
""",
    "unknown key in an event": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { events: [ { data: a, colour: red } ] }
""",
    "a misspelt stream fault": """\
endpoint: GET /a
rules:
  - name: ok
    respond: { events: [ { data: a } ], fault: stal }
""",
    "a misspelt method": """\
endpoint: GTE /a
rules:
  - name: ok
    respond: { status: 200 }
""",
    "a misspelt quota header style": """\
endpoint: GET /a
quota: { limit: 5, window: 10s, headers: clasic }
rules:
  - name: ok
    respond: { status: 200 }
""",
}


def loader_problems(text):
    """`mishap validate`'s problems for a folder holding `text` as its one file, as
    (line, column, message)."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "bad.yaml"), "w") as file:
            file.write(text)
        result = subprocess.run([MISHAP, "validate", folder], capture_output=True, text=True, timeout=60)
    problems = re.findall(r"bad\.yaml:(\d+):(\d+): (.*)", result.stderr)
    return [(int(line), int(column), message) for line, column, message in problems]


def schema_place(document, error):
    """Where a schema error is in the YAML text: the extra key of an `additionalProperties`
    error (where Mishap names an unknown key), else the value the error is about."""
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        extra = [key for key in error.instance if key not in allowed]
        if extra:
            return document.key_places[path + (extra[0],)]
    return document.places[path]


class ScenarioSchemaTests(unittest.TestCase):
    """The schema against the files the project ships and documents, and against the loader."""

    @classmethod
    def setUpClass(cls):
        with open(SCHEMA_PATH) as file:
            cls.schema = json.load(file)
        cls.validator = jsonschema.Draft7Validator(cls.schema)

    def assertValid(self, text, where):
        document = mishap_yaml.Document(text)
        problems = [f"{where}:{schema_place(document, error)[0]}: {error.message[:300]}"
                    for error in self.validator.iter_errors(document.data)]
        self.assertEqual(problems, [], f"{where} does not validate against the schema")

    def test_is_a_draft_07_schema(self):
        # Draft 7: what the YAML language server (VS Code and others) validates with.
        self.assertEqual(self.schema["$schema"], "http://json-schema.org/draft-07/schema#")
        jsonschema.Draft7Validator.check_schema(self.schema)

    def test_shipped_scenarios_validate(self):
        files = [path for path in glob.glob(os.path.join(REPO, "scenarios", "**", "*"), recursive=True)
                 if path.endswith((".yaml", ".yml", ".json")) and "/files/" not in path]
        self.assertGreaterEqual(len(files), 5)
        for path in files:
            with self.subTest(file=os.path.relpath(path, REPO)), open(path) as file:
                self.assertValid(file.read(), os.path.relpath(path, REPO))

    def test_documented_scenario_files_validate(self):
        # Scenario files under docs/ (but the deliberately broken examples), and every YAML
        # block of README.md and docs/ that is a whole scenario file.
        checked = 0
        for path in sorted(glob.glob(os.path.join(REPO, "docs", "**", "*"), recursive=True)):
            relative = os.path.relpath(path, REPO)
            if not path.endswith((".yaml", ".yml")) or "/broken/" in path or "/files/" in path:
                continue
            with self.subTest(file=relative), open(path) as file:
                self.assertValid(file.read(), relative)
            checked += 1
        pages = [os.path.join(REPO, "README.md")] + glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)
        for page in sorted(pages):
            with open(page) as file:
                blocks = mishap_yaml.scenario_blocks(file.read())
            for line, text in blocks:
                where = f"{os.path.relpath(page, REPO)}:{line}"
                with self.subTest(block=where):
                    self.assertValid(text, where)
                checked += 1
        self.assertGreater(checked, 0, "no scenario file or block found under docs/ or in README.md")

    def test_refused_where_the_loader_refuses(self):
        for name, text in REFUSED.items():
            with self.subTest(name):
                problems = loader_problems(text)
                self.assertEqual(len(problems), 1, f"the loader should find one problem in:\n{text}\nfound: {problems}")
                line, column, message = problems[0]
                document = mishap_yaml.Document(text)
                errors = list(self.validator.iter_errors(document.data))
                self.assertTrue(errors, f"the schema accepts what the loader refuses ({message}):\n{text}")
                best = jsonschema.exceptions.best_match(errors)
                self.assertEqual(schema_place(document, best), (line, column),
                                 f"the loader refuses {line}:{column} ({message}); the schema's first error is "
                                 f"'{best.message}' at {schema_place(document, best)}:\n{text}")

    def test_editor_pointers_name_the_schema(self):
        # The "editor-schema-pointers" blocks of docs/editor-support.md: each way an editor is
        # told where the schema is names this repository's schema, from where it is written.
        with open(os.path.join(REPO, "docs", "editor-support.md")) as file:
            page = file.read()
        relative = re.findall(r"\$schema=(\.\./[^\s]+)", page)
        urls = re.findall(r"\$schema[=:] ?(https://[^\s]+)", page)
        self.assertTrue(relative and len(urls) >= 2, "docs/editor-support.md names the schema by path and by URL")
        for path in relative:  # written in a file of scenarios/
            self.assertTrue(os.path.samefile(os.path.join(REPO, "scenarios", path), SCHEMA_PATH), path)
        for url in urls:
            self.assertRegex(url, r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/main/docs/scenario\.schema\.json$")
        settings = json.loads(re.search(r"```json\n(.*?)```", page, re.S).group(1))
        for path, patterns in settings["yaml.schemas"].items():
            self.assertTrue(os.path.samefile(os.path.join(REPO, path), SCHEMA_PATH), path)
            matched = [glob.glob(os.path.join(REPO, pattern), recursive=True) for pattern in patterns]
            self.assertTrue(any(matched), f"{patterns} match no scenario file")
        for entry in settings["json.schemas"]:
            self.assertTrue(os.path.samefile(os.path.join(REPO, entry["url"]), SCHEMA_PATH), entry["url"])


if __name__ == "__main__":
    unittest.main()
