"""Test setup for `hindsight import --from mcp-memory`: drive the real MCP reference memory
server (npm `@modelcontextprotocol/server-memory`) with the official Python MCP SDK, so the
file the import reads is one that server wrote.

Usage: python tests/python/mcp_memory_fill.py PATH/TO/server-memory/dist/index.js MEMORY_FILE
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER, FILE = sys.argv[1], sys.argv[2]


async def main():
    params = StdioServerParameters(
        command="node", args=[SERVER], env={**os.environ, "MEMORY_FILE_PATH": FILE}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            calls = [
                ("create_entities", {"entities": [
                    {"name": "Ada_Lovelace", "entityType": "person",
                     "observations": ["Prefers reports with data sources cited",
                                      "Works in the analytics team"]},
                    {"name": "Analytics_Team", "entityType": "organization", "observations": []},
                    {"name": "Project_Apollo", "entityType": "project",
                     "observations": ["Ships the quarterly dashboard"]},
                ]}),
                ("create_relations", {"relations": [
                    {"from": "Ada_Lovelace", "to": "Analytics_Team", "relationType": "member_of"},
                    {"from": "Ada_Lovelace", "to": "Project_Apollo", "relationType": "leads"},
                ]}),
                ("add_observations", {"observations": [
                    {"entityName": "Ada_Lovelace", "contents": ["Speaks fluent Portuguese"]},
                ]}),
            ]
            for tool, args in calls:
                result = await session.call_tool(tool, args)
                if result.isError:
                    sys.exit(f"{tool} failed: {result.content}")
    print("filled", FILE)


asyncio.run(main())
