"""The binder: a tool's input text becomes the arguments the model wrote, or a refusal the model can read.

    search(query: str, limit: int = 5)
    bind(search_tool, "cats")                          search("cats"): its own default for limit
    bind(search_tool, "cats, 3")                       search("cats", 3)
    bind(search_tool, '{"query": "cats", "limit": 3}') search("cats", 3)
    bind(search_tool, 'query="cats, dogs", limit=3')   search("cats, dogs", 3)
    bind(search_tool, '"Sunol, CA"')                   search("Sunol, CA"): quotes make one value
    bind(search_tool, "cats, many")                    Refusal: limit takes a whole number, not "many"

How a text is read depends on what the tool takes (`inspect.signature(fn)`, which honours a
synthesized `__signature__`):
- No parameters: a blank input ("", '""', "{}", "[]", "none", "null"); anything else is refused.
- One parameter: by name when the text names it (a JSON object or Python dict whose only key is
  the parameter, or `name=value`); a JSON object keyed by anything else is refused, naming the
  parameter, unless the parameter takes objects; a quoted string gives its text; otherwise the
  whole text, converted by the annotation. A blank input (or "{}") leaves a default to the function.
- Several: a JSON object binds by name, a JSON array by position (Python literals are read the
  same way). Otherwise the text is read as comma-separated fields, each a value or `name=value`
  for a parameter's name: a value written as a literal (Python's or JSON's: `"Sunol, CA"`,
  `true`, `None`, `[1, 2]`) is that literal, commas and all; anything else is the text up to the
  next comma. Positional values fill, in order, the parameters not given by name.
- More values than parameters are refused, saying what the tool takes, unless the last parameter
  takes the rest: `*args`, or a text parameter annotated `Rest` (`write(path: str, content: Rest)`
  reads `write[notes.txt, Dear Bob, hello]` as content "Dear Bob, hello"). `**kwargs` take the
  names that match no parameter; without it unknown names are refused, naming the inputs.
- A parameter annotated `Key("first-name")` (a JSON schema's property name that is no Python
  identifier) is written, shown and refused by that name, and its Python name is read too.

Only what the model wrote is bound: defaults are the function's to apply (and an MCP server's,
which applies its own). A parameter whose default is None also takes null.

Conversion by annotation is `converting`'s (str, numbers, bool, unions, Literal and Enum,
containers, typed dicts, dataclasses, named tuples, pydantic models, dates, and any class built
from its text); reading the text is `reading`'s.

`bind` is pure: it reads only the text and the signature (and, once, the refusal's template),
and never raises for any input text. Everything it derives from a signature is computed once per
function, when the Tool is made (`shape`).
"""

from react_text.tools.binding.binder import Key, Parameter, Refusal, Rest, Shape, bind, shape

__all__ = ["Key", "Parameter", "Refusal", "Rest", "Shape", "bind", "shape"]
