"""Independent client check: the official Python MCP SDK (PyPI `mcp`) against the real binary,
over stdio (`hindsight mcp`) and Streamable HTTP (`hindsight serve`). Lists the tools and calls
each one, including a bad call that must come back as a tool error naming the field.

Usage: python tests/python/mcp_sdk_client.py PATH/TO/hindsight
Prints `N passed, M failed` and exits non-zero on any failure.
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/hindsight"
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {name}")
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}")


def structured(result):
    """The tool's JSON object: structuredContent, which must equal the text content."""
    text = json.loads(result.content[0].text)
    if result.structuredContent is not None and result.structuredContent != text:
        raise AssertionError("structured and text content differ")
    return text


async def exercise(session, transport):
    await session.initialize()
    tools = await session.list_tools()
    names = sorted(t.name for t in tools.tools)
    check(f"{transport}: lists the four tools", names == ["memory_forget", "memory_search", "memory_write", "memory_write_batch"], names)
    write_tool = next(t for t in tools.tools if t.name == "memory_write")
    check(f"{transport}: memory_write schema requires content", write_tool.inputSchema.get("required") == ["content"], write_tool.inputSchema)

    written = structured(await session.call_tool("memory_write", {
        "content": f"The user reviews pull requests every morning ({transport})",
        "memory_type": "semantic", "importance": 0.8, "namespace": "py-sdk",
        "source": {"client": "python-sdk"},
    }))
    check(f"{transport}: memory_write stores", written["status"] == "stored", written)

    found = structured(await session.call_tool("memory_search", {
        "query": "when does the user review pull requests", "namespace": "py-sdk", "top_k": 5,
    }))
    ids = [m["id"] for m in found["memories"]]
    check(f"{transport}: memory_search finds it first", ids[:1] == [written["memory_id"]], found)

    bad = await session.call_tool("memory_write", {"content": "x", "importance": 7})
    check(f"{transport}: bad importance is a tool error naming the field",
          bad.isError and "importance" in bad.content[0].text, bad)

    forgotten = structured(await session.call_tool("memory_forget", {"memory_id": written["memory_id"]}))
    check(f"{transport}: memory_forget forgets", forgotten["forgotten"] == 1 and forgotten["ids"] == [written["memory_id"]], forgotten)

    after = structured(await session.call_tool("memory_search", {"query": "pull requests", "namespace": "py-sdk"}))
    check(f"{transport}: forgotten memory is not returned", after["memories"] == [], after)

    # A correction retires what it corrects (kept, deprecated); a look-alike that is also true
    # stays beside it; the results say which.
    namespace = f"py-sdk-revise-{transport}"
    older = structured(await session.call_tool("memory_write", {
        "content": "The user is allergic to penicillin", "memory_type": "semantic",
        "namespace": namespace, "occurred_at": "2025-03-01T10:00:00Z",
    }))
    newer = structured(await session.call_tool("memory_write", {
        "content": "The user is not allergic to penicillin", "memory_type": "semantic",
        "namespace": namespace, "occurred_at": "2025-03-04T10:00:00Z",
    }))
    check(f"{transport}: a negation retires the older memory",
          newer["status"] == "stored" and newer["reason"] == "update:polarity"
          and newer["superseded"] == [older["memory_id"]], newer)
    found = structured(await session.call_tool("memory_search", {
        "query": "is the user allergic to penicillin", "namespace": namespace,
    }))
    check(f"{transport}: only the correction is found",
          [m["id"] for m in found["memories"]] == [newer["memory_id"]], found)
    other = structured(await session.call_tool("memory_write", {
        "content": "The user is allergic to peanuts", "memory_type": "semantic",
        "namespace": namespace,
    }))
    check(f"{transport}: another allergy stays beside it",
          other["status"] == "stored" and other["superseded"] == [], other)


async def over_stdio(data_dir):
    params = StdioServerParameters(command=BINARY, args=["mcp", "--data-dir", data_dir], env={**os.environ})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


def wait_for_endpoint(data_dir, process):
    path = os.path.join(data_dir, "endpoint.json")
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"hindsight serve exited with {process.returncode}")
        try:
            with open(path) as f:
                endpoint = json.load(f)
            host, port = endpoint["url"].split("//")[1].split("/")[0].rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=1):
                return endpoint
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise RuntimeError("hindsight serve published no endpoint")


async def over_http(data_dir):
    process = subprocess.Popen([BINARY, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir],
                               stdout=subprocess.DEVNULL)
    try:
        endpoint = wait_for_endpoint(data_dir, process)
        # `serve` wants a bearer token; the operator's is in the endpoint file it publishes.
        headers = {"Authorization": f"Bearer {endpoint['token']}"}
        async with streamablehttp_client(endpoint["url"], headers=headers) as (read, write, _session_id):
            async with ClientSession(read, write) as session:
                await exercise(session, "http")
    finally:
        process.terminate()
        process.wait(timeout=20)


async def main():
    with tempfile.TemporaryDirectory() as stdio_dir, tempfile.TemporaryDirectory() as http_dir:
        for name, run, directory in (("stdio", over_stdio, stdio_dir), ("http", over_http, http_dir)):
            try:
                await run(directory)
            except Exception as error:  # a transport that fails counts as a failure, never a skip
                check(f"{name}: session completes", False, repr(error))
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
