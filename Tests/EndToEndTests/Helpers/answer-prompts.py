#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal of its own and answers its prompts, as a person at the
terminal would: each answer is typed only once the program has shown the prompt before it (a
program that turns echo off flushes what was typed ahead), so no timing is guessed.

    answer-prompts.py [--answer PROMPT=TEXT | --answer-file PROMPT=FILE | --answer-command PROMPT=SHELL] ... -- COMMAND ARG...

--answer-command runs SHELL when the prompt shows and types its output (a code that was sent
only after the program started).

Everything the program wrote on the terminal goes to standard output; the exit status is the
program's (or 124 when a prompt did not come within 60 seconds).
"""
import os
import pty
import select
import subprocess
import sys
import time


def answer(flag, text):
    """What to type for an answer given as `flag` with `text`."""
    if flag == "--answer-file":
        with open(text) as source:
            return source.read().rstrip("\n").encode()
    if flag == "--answer-command":
        return subprocess.run(["/bin/sh", "-c", text], check=True, capture_output=True).stdout.strip()
    return text.encode()


def main():
    separator = sys.argv.index("--")
    answers, options = [], sys.argv[1:separator]
    for flag, value in zip(options[::2], options[1::2]):
        prompt, _, text = value.partition("=")
        answers.append((flag, prompt.encode(), text))
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[separator + 1], sys.argv[separator + 1:])
    seen, shown = b"", 0
    deadline = time.monotonic() + 60
    while True:
        ready, _, _ = select.select([terminal], [], [], max(0, deadline - time.monotonic()))
        if not ready:
            sys.stdout.buffer.write(seen)
            os.kill(pid, 9)
            sys.exit(124)
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if answers and answers[0][1] in seen[shown:]:
            flag, prompt, text = answers.pop(0)
            shown = seen.index(prompt, shown) + len(prompt)
            os.write(terminal, answer(flag, text) + b"\n")
            deadline = time.monotonic() + 60
    sys.stdout.buffer.write(seen)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
