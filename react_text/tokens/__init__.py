"""The token account, one owner: everything a run knows about tokens, behind one narrow API.

The episode asks `account.Account` and nothing else here (it never touches the meter, the history's
counts or the plan):

    Account(opening, count, limits, window)   the account of one run
    allowance(number)           the reply allowance of a normal call (old steps elided first if the
                                window needs it), or why none: "window", "max_tokens", "too_long"
    forced(number, limit, squeeze=...)        the forced final call's allowance (its room was
                                reserved before every normal call) and the note that asks for it
    asking(), bill(reply)       a request goes out; what it came to (the server's usage, else ours)
    refused(number, ...)        a request refused as too long: the one retry's allowance, or None
    resume(allowance, ...)      a reply cut inside its thinking, carried on: its allowance
    cut(result)                 a tool's result cut to `Limits.observation_tokens`
    feed(number, observation)   the observation as fed back (cut for the window or the forced call,
                                or with a warning), and the limit that forces the next call
    add_reply, add_observation, add_note      what is recorded; prompt(), transcript(), billed, elided

Behind it: `meter` (offline tiktoken encodings; what was billed; `Meter.estimate`, the one estimate
of a request in the server's units), `history` (what a run sends, each text counted once; elision
and folding), `plan` (allowances, the forced call's reserve, when to elide and when to warn) and
`truncation` (a text cut to its allowance, head and tail).
"""

__all__: list[str] = []
