"""A local HTTP server that speaks the OpenAI chat-completions and embeddings protocol, for tests and demos.

It replays scripted replies in order (well-formed, malformed, prose-wrapped, refusals, HTTP errors with
`Retry-After`, slow answers) and, when the script is empty, answers like a plausible small model:
extraction prompts get memories made from the quoted text, reflection prompts get one signal citing the
first fresh memories, embeddings are hashed bags of words (similar texts, similar vectors).

Run it on its own for a demo daemon: `python tests/fake_llm.py --port 8765` (prints its base URL).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from local_server import LocalServer, QuietHandler

EMBED_DIM = 64


@dataclass
class Reply:
    """One scripted reply. `content` is the assistant message text; `raw` replaces the whole HTTP body;
    `status` other than 200 sends an OpenAI-style error; `delay_s` waits before answering (timeouts)."""

    content: str | None = None
    status: int = 200
    raw: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    refusal: str | None = None


def hashed_embedding(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic bag-of-words vector: each lower-cased word adds 1 at a hashed position; L2-normalised."""
    vec = np.zeros(dim, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % dim] += 1.0
    norm = np.linalg.norm(vec)
    return (vec / norm if norm else vec).tolist()


def _quoted(prompt: str, tag: str) -> str:
    match = re.search(rf"<<<{tag}\n(.*?)\n{tag}>>>", prompt, re.DOTALL)
    return match.group(1) if match else ""


def plausible_answer(messages: list[dict]) -> str:
    """What a well-behaved small model would answer to twin's extraction, reflection, chat-reply and chat-summary
    prompts and capture's comparison prompt (told apart by how their system prompt starts)."""
    system = messages[0]["content"] if messages else ""
    user = "\n".join(m["content"] for m in messages[1:] if m.get("role") == "user")
    if system.startswith("Task: reflection"):
        ids = [int(i) for i in re.findall(r"^#(\d+) ", _quoted(user, "MEMORIES"), re.MULTILINE)]
        signals = []
        if len(ids) >= 3:
            signals.append({"kind": "insight", "title": "Reading pattern",
                            "body": f"You took in {len(ids)} new things; #{ids[0]} stands out.",
                            "priority": 0.4, "evidence": ids[:2]})
        return json.dumps({"signals": signals, "widgets": [{"type": "memory", "reason": "new memories"}],
                           "profile": {"facts": [], "goals": [], "preferences": []},
                           "thought": f"Looked over {len(ids)} new memories."})
    if system.startswith("Task: interests"):  # one interest per site with ≥ 3 lines, named by its 2 commonest words
        by_site: dict[str, list[str]] = {}
        for line in _quoted(user, "VISITS").splitlines():
            site, dash, title = line.partition(" — ")
            if dash:
                by_site.setdefault(site.strip(), []).append(title)
        interests = []
        for site, titles in sorted(by_site.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            words: dict[str, int] = {}
            for word in (w for t in titles for w in set(re.findall(r"[a-z]{4,}", t.lower()))):
                words[word] = words.get(word, 0) + 1
            if len(titles) >= 3:
                topic = " ".join(w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:2]) or site
                interests.append({"topic": topic, "pages": len(titles), "sites": [site]})
        return json.dumps({"interests": interests[:5]})
    if system.startswith("Task: comparison"):  # a cautious model: only "lives in X" / "lives in Y" contradict
        pairs, new = [], ""
        for line in _quoted(user, "MEMORIES").splitlines():
            if m := re.match(r"NEW (\d+): (.*)", line):
                number, new = int(m.group(1)), m.group(2)
            elif (m := re.match(r"\s+EXISTING #(\d+): (.*)", line)) and new:
                a, b = re.search(r"lives in (\w+)", new), re.search(r"lives in (\w+)", m.group(2))
                relation = ("contradicts" if a.group(1) != b.group(1) else "same") if a and b else "unrelated"
                pairs.append({"new": number, "existing": int(m.group(1)), "relation": relation,
                              "reason": "where Owner lives" if relation != "unrelated" else ""})
        return json.dumps({"pairs": pairs})
    if system.startswith("You are the owner's personal memory twin"):
        remembered = [line[2:] for line in _quoted(system, "MEMORIES").splitlines() if line.startswith("- ")]
        last = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        if remembered:
            return f"You asked: {last} From what I remember: {remembered[0]}"
        return "Got it, thanks for telling me."
    if system.startswith("Summarise this conversation"):
        said = [line for line in _quoted(user, "CHAT").splitlines() if line.startswith("Owner: ")]
        return "\n".join(f"- {line[7:]}" for line in said[:12])
    text = _quoted(user, "TEXT")
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if 20 <= len(s.strip()) <= 300][:3]
    memories = [{"kind": "document", "content": f"Owner has a text saying: {s.rstrip('.!?')}.", "importance": 0.4,
                 "tags": ["demo"]} for s in sentences]
    if "Source: telegram:" in user:  # what the owner says in chat: first person made third person, as a model would
        memories = [{"kind": "fact", "importance": 0.5,
                     "content": "Owner said: " + re.sub(r"(?i)\b(I'm|I|my|me)\b", lambda m: {
                         "i": "they", "i'm": "they are", "my": "their", "me": "them"}[m.group(1).lower()], s)}
                    for s in sentences]
    return json.dumps({"memories": memories, "profile": {"facts": [], "goals": [], "preferences": [],
                                                         "routines": [], "tone": None}})


class FakeLLM(LocalServer):
    """The server: `start()` binds 127.0.0.1 on a free port; `url` is the base URL (`…/v1`); `script(*replies)`
    queues replies; `requests` records every request `(path, headers, json body)`."""

    def __init__(self, port: int = 0):
        self.script_queue: deque[Reply] = deque()
        self.requests: list[tuple[str, dict, dict]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake-cheap", "object": "model"}]}))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    reply = fake.script_queue.popleft() if fake.script_queue else None
                if reply and reply.delay_s:
                    time.sleep(reply.delay_s)
                if self.path.endswith("/embeddings"):
                    return self._embeddings(body, reply)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, json.dumps({"error": {"message": "not found"}}))
                return self._chat(body, reply)

            def _chat(self, body: dict, reply: Reply | None) -> None:
                if reply is not None and reply.raw is not None:
                    return self._send(reply.status, reply.raw, reply.headers)
                if reply is not None and reply.status != 200:
                    err = {"error": {"message": "scripted error", "type": "server_error", "code": reply.status}}
                    return self._send(reply.status, json.dumps(err), reply.headers)
                content = plausible_answer(body.get("messages", [])) if reply is None else reply.content
                message = {"role": "assistant", "content": content}
                if reply is not None and reply.refusal:
                    message = {"role": "assistant", "content": None, "refusal": reply.refusal}
                self._send(200, json.dumps({
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
                    reply.headers if reply else None)

            def _embeddings(self, body: dict, reply: Reply | None) -> None:
                if reply is not None and (reply.raw is not None or reply.status != 200):
                    return self._send(reply.status, reply.raw or b'{"error": {"message": "scripted"}}',
                                      reply.headers)
                inputs = body.get("input", [])
                inputs = [inputs] if isinstance(inputs, str) else inputs
                data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(t)}
                        for i, t in enumerate(inputs)]
                self._send(200, json.dumps({"object": "list", "data": data, "model": body.get("model", "fake"),
                                            "usage": {"prompt_tokens": 1, "total_tokens": 1}}))

            def _send(self, status: int, payload: str | bytes, headers: dict | None = None) -> None:
                data = payload.encode() if isinstance(payload, str) else payload
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): what a real server sees too

        super().__init__(Handler, port)

    @property
    def url(self) -> str:
        """The base URL to give the client, e.g. `http://127.0.0.1:40123/v1`."""
        return self.http_url("/v1")

    def script(self, *replies: Reply) -> None:
        """Queue `replies`; each request takes the next one, then plausible answers resume."""
        with self.lock:
            self.script_queue.extend(replies)

    def chat_requests(self) -> list[dict]:
        """The JSON bodies of the chat-completion requests received so far."""
        with self.lock:
            return [body for path, _, body in self.requests if path.endswith("/chat/completions")]


def main() -> None:
    """Serve until interrupted, printing the base URL (demo and acceptance runs)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    fake = FakeLLM(args.port).start()
    print(fake.url, flush=True)
    try:
        fake.thread.join()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
