"""Read a model's reply: `parse(text, tools=names) -> Action | Final | ParseError`. Never raises; linear time.

The canonical form, and what the tolerant default also reads:

    reply     := ["```" line] [<think>...</think>] [echoed observation] section* [made-up observation ...]
                 ["```"]                         one fence around the whole reply is unwrapped;
                                                 CRLF line ends are read as LF
    section   := label ":" body                 labels at a line start, any case, with markdown
               | "[" label "]" [":"] body          decoration ("**Action 2:**", "### Thought:") or
                                                 in brackets ("[THOUGHT]", "[FINAL ANSWER] 42")
    label     := THOUGHT | ACTION | ACTION INPUT | TOOL | TOOL NAME | TOOL INPUT | FUNCTION NAME
               | FUNCTION INPUT | FINAL [ANSWER] | ANSWER | "AI" (in capitals only: LangChain's
                 conversational answer) (and the same words in Spanish, French, German and
                 Chinese); the words of a label may be joined by spaces, "_", "-" or nothing
                 ("FINAL_ANSWER", "FinalAnswer")
    ACTION    := tool "[" input "]" junk?        balanced brackets; input may span lines, sit in a
                                                 code fence or in quotes; "(" ")" also accepted
               | tool ["(" description ")"] [TOOL CAPTION: ...]  ACTION INPUT: input
                                                 (LangChain/MRKL, Haystack, Bee, BeeAI)
               | JSON blob, bare or fenced        see "JSON blobs" below
               | Finish[answer]                   the ReAct paper's final answer (also answer[...],
                                                 final_answer[...], Final Answer + Action Input)
               | None  then  FINAL ANSWER: ...    "no action" (None, N/A, "I have the final answer")
                                                 followed by the answer is the answer

With no labelled directive, a JSON action blob anywhere in the reply is read, unless it only
looks like a record (a name and members that are no input: {"name": "Bob", "age": 3}) or it is
quoted in the middle of a line of a labelled thought ("Thought: ...called as {"action": ...}").
Upper-case `ACTION:` and `FINAL:` (and `Action:`, `Action Input:`, `Tool Input:`, `Final Answer:`)
also count later on a line, after a space or glued to a sentence ("...search.Action:SearchToolAction
Input:{...}"). Stray decoration after a label's colon is not part of the value ("Action Input: **
{...}"). The first directive wins; the text after it is returned as `discarded`, exactly as written.
Thinking is dropped (of an unclosed <think>, only the tag) and everything from a made-up
observation on is cut first (see `guard`); an observation label that opens the reply is the model
echoing the last observation, and is skipped, not cut.

JSON blobs: keys are compared ignoring case, with spaces and hyphens as "_" ("Action Input"). The
tool is the first string under action, tool, tool_name, name, function, api_name, action_name or
function_name; the input is the value under action_input, tool_input, input, arguments, args,
parameters, action_variables or query (or any key ending in "_input"). The call may sit one level
down, under function, tool_call, function_call, command or tool ({"command": {"name", "args"}},
AutoGPT; {"tool": {"name", "args"}}, SuperAGI). A blob with no name but final_answer, answer or
final is the answer. Strings may hold raw line breaks; a blob may be a Python literal with single
quotes (up to 4096 characters). A blob that names a tool but holds its arguments under a key it
does not know is the error `unread_arguments`: a tool is never run with less than the model wrote.

What an action carries:
- `tool`: a registered name when `tools` are given and one matches where a name is expected
  (exactly, then ignoring case; the registered spelling is returned), so names may hold spaces,
  hyphens, dots and any letters ("Wikipedia Research Tool", `fs.read_file`, `加法`); otherwise an
  identifier, as written. Without `tools`, the identifier may start with any letter (`天气`), and
  a name may be two to five words with single spaces (`web search[x]`, "Action: Use Requests" then
  "Action Input:") when they are all that comes before its input, or all of the line, and none of
  them makes a sentence (a subject, a modal, a gerund or an article: "I will use search[x]" names
  `search`, as a call later on the line). `Finish`, `answer`, `final_answer` (and `final`) name
  the final answer only when no tool of that name is registered.
- `input`: as written, after unwrapping one code fence; quotes around it stay (`"Sunol, CA"` is
  one value, which only the binder can tell; an answer loses one pair). A JSON object or array
  stays JSON text (in a blob, the text of that value); a blob input that is a JSON string is that
  string's text (OpenAI-style `"arguments": "{\\"a\\": 1}"`). An `Action Input:` written as a
  Python literal (`{'a': 1}`) is kept as written too: the parser knows no signatures, the binder
  reads JSON and Python literals alike. An empty `Action Input:` is "".
- `closed`: False when the input had no definite end: a bracket never closed, an `Action Input:`
  that runs to the very end of the reply with no line break after it, a fence never closed.

`parse(text, strict=True)` reads only the canonical form: upper-case labels at a line start, no
decoration, `tool[input]` with nothing after the closing bracket (a registered name exactly as
registered, or an identifier).

Speed: a reply of a common shape (canonical, title-case or bold labels, LangChain's Action Input,
chatter after the answer, a made-up observation, a think block in front, a JSON blob) is read by
one anchored match first, as the full reading would read it (`fast`, a microsecond or two);
everything else goes through the sections (bench/parser_speed.py measures both, beside smolagents).

Linear time, by construction (a reply of 10,000 spaces after "Action: x" once took 28 s):
- Searched patterns (labels, observations) begin at a line start, or at a letter that a lookbehind
  of one character then checks, and every repeat in them is bounded or possessive, so each start
  costs a bounded amount; each is searched once per advance through the reply, never again from the
  same place, and only in its window (`react_text.parser.windows`: from the line of the first character
  every match holds, a colon, a bracket or a "#", to the line of the last), which only leaves out
  text where no match can be. Label words are a trie of character classes with possessive
  separators; a line label is only tried at a line start that goes on with a digit or a label's
  first letter, a bracket label after "[" and a label's first letter.
- Patterns matched at a position read a window of `tolerant._NEAR` characters at most (labels and names are
  short); runs that adjacent parts could share (spaces before and after a description) are
  possessive, so a long run is never split in every possible way. A fence is read by position.
- Tool names are found by a dictionary of first letters, never by an alternation of names; the
  identifier before a bracket by a scan back over at most 64 characters.
- Repeated work is capped: `tolerant._SECTIONS` sections before the next directive is searched for
  directly, `blobs._JSON_TRIES` starts of a JSON blob, `tolerant._CALL_TRIES` brackets on an action
  line, and a Python literal
  only twice per reply and only up to 4096 characters (a quote-aware scan finds its end).
tests/test_pumping.py checks it: every pattern in the package, pumped from its own structure to
100 KB (each repeated part and each pair of adjacent optional or repeated parts, with and without
a failing suffix), and whole replies of every such shape through `parse`, the guard and `Agent`.

The package, by job (each module's docstring says more):

    reading.py    `parse`: the fast paths, line ends, a fence around the reply, thinking and the
                  guard's cut, then the strict or the tolerant reader
    fast.py       the fast paths: the common shapes, each in one match, read as the full reading reads them
    labels.py     the label words, their decorations, the label patterns, finding label lines
    tolerant.py   the tolerant reader: sections, actions in every dialect, answers
    blobs.py      JSON and Python-literal action blobs
    families.py   where a call without a label starts (issue 34), read there if no label comes first:
    calls.py        continuations and call syntax: `Search[x]` / `search(q="x")` alone on a line
                    (a registered name), `Finish[...]`, `finish(answer="x")`, Python call lists
    markup.py       markup calls: <function=...>, <tool_call>, Kimi sections, [TOOL_CALLS],
                    <|python_tag|>, dspy-go's <action>
    code.py         code actions: `Code:` and a ```py block (<end_code>), for a registered code tool
    fences.py     code fences and quotes around a value, and around the whole reply
    common.py     what the readers share: registered tool names, the words for the final answer,
                  the error value
    strict.py     the strict canonical form (`parse(text, strict=True)`)
    render.py     `render_action`, written so that `parse` reads it back
    baselines.py  `parse_naive`, `parse_strict` and `PARSERS`: the baselines of the scoreboard
"""

from react_text.parser.baselines import PARSERS, parse_naive, parse_strict
from react_text.parser.reading import parse
from react_text.parser.render import render_action

__all__ = ["PARSERS", "parse", "parse_naive", "parse_strict", "render_action"]
