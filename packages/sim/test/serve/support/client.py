#!/usr/bin/env python3
"""A minimal non-JS host of the DSH protocol, standard library only (urllib + json).

It plays the adapter-author's role against `sim serve`: for each user turn of a script it appends the
protocol events (turn/start, step/start, the system and user messages, the request header and context,
one assistant/chunk per decoded SSE delta, assistant/message with usage, step/end, turn/end) to a seed-dialect
session log, streams an OpenAI-compatible chat completion over real HTTP with `urllib`, and records the
request capture (section 1.1) so `sim check --requests` can judge what was sent. Turns with tool calls are
out of scope (the script must not need tools). Times come from a virtual clock: 1700000000000 + 5 ms x seq.

Usage: client.py --base-url URL --script script.json --log out.jsonl --requests out.requests.jsonl
The script is {"provider", "model", "systemPrompt", "turns": ["user text", ...]}.
The API key is read from the environment variable SIM_CLIENT_API_KEY and sent as a bearer token.
"""
import argparse
import json
import os
import sys
import urllib.request

ORIGIN_MS = 1700000000000
STEP_MS = 5
EVENTS_MAX = 100000


class Log:
    """An append-only event list written as JSONL at the end."""

    def __init__(self):
        self.events = []

    def now(self):
        return ORIGIN_MS + STEP_MS * len(self.events)

    def append(self, type_, data, **extra):
        if len(self.events) >= EVENTS_MAX:
            raise RuntimeError("event bound reached")
        event = {"seq": len(self.events), "time": self.now(), "type": type_, "data": data}
        event.update(extra)
        self.events.append(event)
        return event["seq"]


def wire_message(message):
    """A protocol message as an OpenAI chat message (text and reasoning only)."""
    texts = [b["text"] for b in message["content"] if b["type"] == "text"]
    out = {"role": message["role"], "content": "".join(texts)}
    reasoning = [b["text"] for b in message["content"] if b["type"] == "reasoning"]
    if reasoning:
        out["reasoning_content"] = "".join(reasoning)
    return out


def sse_data(response):
    """Yields the payload of each `data:` line of an SSE response until [DONE]."""
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        yield json.loads(payload)


def usage_of(wire_usage):
    """OpenAI usage -> protocol TokenUsage (prompt_tokens includes the cached part)."""
    cached = (wire_usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return {
        "inputTokens": wire_usage["prompt_tokens"] - cached,
        "outputTokens": wire_usage["completion_tokens"],
        "cacheReadTokens": cached,
    }


def run(args):
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    base = args.base_url.rstrip("/")
    key = os.environ.get("SIM_CLIENT_API_KEY", "")
    headers = {"content-type": "application/json", "authorization": "Bearer " + key}
    provider, model = script["provider"], script["model"]

    with urllib.request.urlopen(urllib.request.Request(base + "/models/" + model, headers=headers), timeout=30) as r:
        context_window = json.load(r).get("context_window")

    log = Log()
    surface = []
    requests = []
    ids = 0

    def next_id(kind):
        nonlocal ids
        ids += 1
        return "m-%s-%d" % (kind, ids)

    for turn, user_text in enumerate(script["turns"], start=1):
        log.append("turn/start", {"turn": turn})
        log.append("step/start", {"turn": turn, "step": 1})
        if turn == 1:
            system = {"id": next_id("system"), "role": "system", "content": [{"type": "text", "text": script["systemPrompt"]}],
                      "source": {"kind": "plugin", "plugin": "system-prompt"}}
            log.append("system/message", system, surfaceOp="append")
            surface.append(system)
        user = {"id": next_id("user"), "role": "user", "content": [{"type": "text", "text": user_text}], "source": {"kind": "user"}}
        log.append("user/message", user, surfaceOp="append")
        surface.append(user)
        if turn == 1:
            log.append("request/header", {"header": {"config": {"provider": provider, "model": model}}, "reason": "initial"})
            context = {"provider": provider, "model": model}
            if context_window is not None:
                context["contextWindow"] = context_window
            log.append("request/context", context)

        requests.append({"index": len(requests), "logRevisionAtDispatch": len(log.events), "time": log.now(),
                         "purpose": "conversation", "provider": provider, "model": model,
                         "messages": json.loads(json.dumps(surface)), "outcome": "stop"})
        body = {"model": model, "stream": True, "stream_options": {"include_usage": True},
                "messages": [wire_message(m) for m in surface]}
        request = urllib.request.Request(base + "/chat/completions", data=json.dumps(body).encode("utf-8"), headers=headers,
                                         method="POST")
        chunk_seqs = []
        blocks = []  # [kind, text]
        usage = None
        finish = None

        def chunk(c):
            chunk_seqs.append(log.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": c}))

        def delta(kind, text):
            if not text:
                return
            if not blocks or blocks[-1][0] != kind:
                if blocks:
                    end_block(len(blocks) - 1)
                blocks.append([kind, ""])
                chunk({"type": "block-start", "index": len(blocks) - 1, "blockType": kind})
            blocks[-1][1] += text
            chunk({"type": kind + "-delta", "index": len(blocks) - 1, "text": text})

        def end_block(index):
            kind, text = blocks[index]
            chunk({"type": "block-end", "index": index, "block": {"type": kind, "text": text}})

        with urllib.request.urlopen(request, timeout=30) as response:
            for data in sse_data(response):
                for choice in data.get("choices", []):
                    d = choice.get("delta", {})
                    delta("reasoning", d.get("reasoning_content"))
                    delta("text", d.get("content"))
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                if data.get("usage"):
                    usage = usage_of(data["usage"])
        if finish != "stop":
            raise RuntimeError("turn %d: expected finish_reason stop, got %r" % (turn, finish))
        if blocks:
            end_block(len(blocks) - 1)
        if usage is not None:
            chunk({"type": "usage", "usage": usage})
        chunk({"type": "finish", "reason": {"kind": "stop"}})
        assistant = {"id": next_id("assistant"), "role": "assistant",
                     "content": [{"type": kind, "text": text} for kind, text in blocks],
                     "source": {"kind": "model", "provider": provider, "model": model}}
        data = {"turn": turn, "step": 1, "message": assistant}
        if usage is not None:
            data["usage"] = usage
        log.append("assistant/message", data, surfaceOp="append", sourceEventSeqs=chunk_seqs)
        surface.append(assistant)
        log.append("step/end", {"turn": turn, "step": 1})
        log.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})

    with open(args.log, "w", encoding="utf-8") as f:
        for event in log.events:
            f.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    with open(args.requests, "w", encoding="utf-8") as f:
        for r in requests:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(json.dumps({"events": len(log.events), "requests": len(requests)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--requests", required=True)
    run(parser.parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
