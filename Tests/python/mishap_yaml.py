"""Scenario text read as Mishap reads it, for checking it against docs/scenario.schema.json.

PyYAML follows YAML 1.1 (`yes` is true, `0200` is octal); Mishap reads plain scalars with the
YAML 1.2 core schema, as its `YAMLScalar.resolve` does: quoted and tagged scalars are strings,
plain ones may be null, booleans or numbers. Mapping keys are their text (`200:` is the key
"200"). No merge keys (`<<` is a key like any other). Each value keeps the node it came from,
so a problem found in the data is placed at the line and column Mishap would name.
"""

import re

import yaml

PLAIN = "tag:mishap,plain"


class _Loader(yaml.SafeLoader):
    """Composes without typing anything: every plain scalar gets the tag `PLAIN`."""


_Loader.yaml_implicit_resolvers = {}
_Loader.add_implicit_resolver(PLAIN, re.compile(r"(?s).*"), None)

_NUMBER_CHARACTERS = set("0123456789+-.eE")


def _scalar(node):
    """The JSON value of a scalar node, as `YAMLScalar.resolve` types it."""
    text = node.value
    if node.tag != PLAIN or node.style is not None:
        return text
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.fullmatch(r"[+-]?[0-9]+", text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    if text[0] in "0123456789+-." and set(text) <= _NUMBER_CHARACTERS:
        try:
            value = float(text)
        except ValueError:
            return text
        if value not in (float("inf"), float("-inf")) and value == value:
            return value
    return text


class Document:
    """A YAML text's single document as JSON data, with where each value and key is written.

    `places[path]` is (line, column) of the value at `path` (a tuple of keys and indices, as
    jsonschema's `absolute_path`), `key_places[path]` that of its key; both 1-based, columns
    counted in characters, as Mishap counts them.
    """

    def __init__(self, text):
        self.places = {}
        self.key_places = {}
        root = yaml.compose(text, Loader=_Loader)
        self.data = None if root is None else self._value(root, ())

    @staticmethod
    def _place(node):
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _value(self, node, path):
        self.places[path] = self._place(node)
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self._value(item, path + (index,)) for index, item in enumerate(node.value)]
        mapping = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else f"<a {key.id} as a key>"
            self.key_places[path + (name,)] = self._place(key)
            mapping[name] = self._value(value, path + (name,))
        return mapping


def scenario_blocks(markdown):
    """The ```yaml blocks of a Markdown text that are whole scenario files: a mapping with a
    key only a file has at its top (endpoint, endpoints, extends, state), with no elided part
    (`...`, as in `rules: [...]`). Each as (line of its first line, text)."""
    blocks = []
    for match in re.finditer(r"^```ya?ml[^\n]*\n(.*?)^```", markdown, re.S | re.M):
        text = match.group(1)
        if "..." in text:
            continue
        try:
            data = Document(text).data
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and {"endpoint", "endpoints", "extends", "state"} & set(data):
            blocks.append((markdown.count("\n", 0, match.start(1)) + 1, text))
    return blocks
