#!/usr/bin/env python3
"""Acceptance check with an MCP client nobody on the team wrote (the Python `mcp` package).

Drives a running Nova (`cargo xtask run --headless --data-dir D`) over `nova mcp --data-dir D`
on pages nobody wrote for the tests, and prints what each step saw. `cargo xtask acceptance`
(part of `cargo xtask test`) runs it against `cargo xtask run` in Chromium and in Firefox, with
the pinned `mcp` package in target/tools/python. By hand:

    pip install mcp==2.3.0
    python3 tests/acceptance/python_agent.py --nova dist/bin/nova --data-dir D --url URL

With a local copy of the Rust documentation served over HTTP (`python3 -m http.server` in
`$(rustc --print sysroot)/share/doc/rust/html`), URL is e.g. http://127.0.0.1:8000/book/index.html.
Exits non-zero when any step fails.
"""

import argparse
import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        sys.exit(1)


async def main(nova, data_dir, url):
    params = StdioServerParameters(command=nova, args=["mcp", "--data-dir", data_dir])
    announced = []

    async def on_message(message):
        # A notification model (mcp 2), or one wrapped in a root model (mcp 1).
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            announced.append(message)

    async with stdio_client(params) as (r, w), ClientSession(r, w, message_handler=on_message) as s:
        await s.initialize()
        tools = {t.name for t in (await s.list_tools()).tools}
        check("nova.tools_bundle" in tools and "nova.perceive" not in tools, f"{len(tools)} setup tools listed at start")

        bundle = (await s.call_tool("nova.tools_bundle", {"bundle": "browser_automation"})).structured_content
        check(bundle["ok"], f"bundle loaded: {bundle.get('loadedBundles')}")
        for _ in range(100):
            if announced:
                break
            await asyncio.sleep(0.05)
        check(len(announced) == 1, "the new tool list was announced (notifications/tools/list_changed)")
        tools = {t.name for t in (await s.list_tools()).tools}
        check({"nova.navigate", "nova.perceive", "nova.click_selector"} <= tools, f"{len(tools)} tools listed with the bundle")
        nav = (await s.call_tool("nova.navigate", {"url": url})).structured_content
        check(nav["ok"], f"navigate -> {nav.get('title')!r}")

        page = (await s.call_tool("nova.perceive", {})).structured_content
        check(page["ok"] and page["elements"], f"perceive: {len(page['elements'])} elements, {len(page['text'])} text chars")
        print("     first elements:", page["elements"][:5])

        text = (await s.call_tool("nova.read_text", {"maxChars": 300})).structured_content
        check(text["ok"] and text["text"], f"read_text: {text['text'][:80]!r}")

        find_box = lambda els: next((e for e in els if " textbox " in e or " searchbox " in e), None)
        textbox = find_box(page["elements"])
        if textbox is None:
            # Many sites hide their search field behind a toggle: open it like a person would.
            toggle = next((e for e in page["elements"] if " button " in e and "search" in e.lower()), None)
            check(toggle is not None, f"found a search toggle: {toggle!r}")
            await s.call_tool("nova.click_selector", {"selector": toggle.split(" ")[0]})
            textbox = find_box((await s.call_tool("nova.perceive", {})).structured_content["elements"])
        check(textbox is not None, f"found a text field: {textbox!r}")
        if textbox:
            ref = textbox.split(" ")[0]
            typed = (await s.call_tool("nova.type_selector", {"selector": ref, "text": "iterator"})).structured_content
            check(typed["ok"] and typed["actionDispatched"], f"type into {textbox!r} -> readback {typed.get('readback')!r}")

        link = next((e for e in page["elements"] if " link " in e and "->" in e and "http" not in e), None)
        check(link is not None, f"found a link to click: {link!r}")
        clicked = (await s.call_tool("nova.click_selector", {"selector": link.split(" ")[0]})).structured_content
        check(clicked["ok"] and clicked["actionDispatched"], f"click {clicked['element']!r}")
        await asyncio.sleep(1.0)
        after = (await s.call_tool("nova.perceive", {"maxElements": 5})).structured_content
        check(after["ok"], f"after click: {after['title']!r} at {after['url']}")

        shot = await s.call_tool("nova.capture_screenshot", {})
        sc = shot.structured_content
        check(sc["ok"] and sc["width"] > 0, f"screenshot {sc['width']}x{sc['height']}, {sc['bytes']} bytes at {sc['screenshotFilePath']}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--nova", default="dist/bin/nova")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--url", required=True)
    a = ap.parse_args()
    asyncio.run(main(a.nova, a.data_dir, a.url))
