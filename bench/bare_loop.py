"""The floor for `bench/runner_overhead.py`: a bare aiohttp loop sending the same chat requests.

Reads one request body per line from a JSONL file, sends them to URL with N in flight over one
aiohttp session, reads each reply's JSON and its message content, and prints the loop's own time.
No prompts, extraction, scoring, cache or files: what a client cannot go below.

    python bench/bare_loop.py BODIES.jsonl URL CONCURRENCY
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp


async def main(path: str, url: str, concurrency: int) -> None:
    bodies = [json.loads(line) for line in open(path, encoding="utf-8")]
    queue: asyncio.Queue = asyncio.Queue()
    for b in bodies:
        queue.put_nowait(b)
    replies = 0
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=conn) as session:
        async def worker() -> None:
            nonlocal replies
            while not queue.empty():
                body = queue.get_nowait()
                async with session.post(url, json=body) as r:
                    data = await r.json()
                if data["choices"][0]["message"]["content"]:
                    replies += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        loop_s = time.perf_counter() - t0
    if replies != len(bodies):
        sys.exit(f"only {replies} of {len(bodies)} replies")
    print(json.dumps({"requests": len(bodies), "loop_s": round(loop_s, 3)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
