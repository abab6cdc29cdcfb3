// Independent client check: the official TypeScript MCP SDK (npm `@modelcontextprotocol/sdk`)
// against the real binary, over stdio (`hindsight mcp`) and Streamable HTTP (`hindsight serve`).
// Lists the tools and calls each one (the SDK validates every result against the tool's output
// schema), including a bad call that must come back as a tool error naming the field. Anything
// the SDK or its schema validator logs (`unknown format "uint" ignored in schema`, …) fails it.
//
// Usage: HINDSIGHT_TS_SDK_HOME=DIR node tests/typescript/mcp_sdk_client.mjs PATH/TO/hindsight
// (DIR holds node_modules/@modelcontextprotocol/sdk; .ci/run installs it.)
// Prints `N passed, M failed` and exits non-zero on any failure.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const BINARY = process.argv[2] ?? "target/debug/hindsight";
const HOME = process.env.HINDSIGHT_TS_SDK_HOME;
if (!HOME) {
  console.error("HINDSIGHT_TS_SDK_HOME is not set: the directory where npm installed @modelcontextprotocol/sdk");
  process.exit(2);
}
const sdk = (path) =>
  import(pathToFileURL(join(HOME, "node_modules/@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const sdkVersion = JSON.parse(
  readFileSync(join(HOME, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

// Whatever the SDK logs is a finding: its validator warns once per schema it compiles.
const logged = [];
for (const level of ["warn", "error", "log", "info", "debug"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    logged.push(`${level}: ${args.map(String).join(" ")}`);
    original(...args);
  };
}
const print = (line) => process.stdout.write(line + "\n");

const results = { passed: 0, failed: 0 };
function check(name, condition, detail = "") {
  if (condition) {
    results.passed += 1;
    print(`ok   ${name}`);
  } else {
    results.failed += 1;
    print(`FAIL ${name} ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
}

// The tool's JSON object: structuredContent, which must equal the text content.
function structured(result) {
  const text = JSON.parse(result.content[0].text);
  if (result.structuredContent !== undefined && JSON.stringify(result.structuredContent) !== JSON.stringify(text)) {
    throw new Error("structured and text content differ");
  }
  return text;
}

async function exercise(client, transport) {
  const before = logged.length;
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(`${transport}: lists the four tools`,
    JSON.stringify(names) === JSON.stringify(["memory_forget", "memory_search", "memory_write", "memory_write_batch"]), names);
  check(`${transport}: every tool declares an output schema`, tools.every((t) => t.outputSchema), tools);

  const call = (name, args) => client.callTool({ name, arguments: args });
  const namespace = `ts-sdk-${transport}`;
  const written = structured(await call("memory_write", {
    content: `The user reviews pull requests every morning (${transport})`,
    memory_type: "semantic", importance: 0.8, namespace, source: { client: "typescript-sdk" },
  }));
  check(`${transport}: memory_write stores`, written.status === "stored", written);

  const found = structured(await call("memory_search", {
    query: "when does the user review pull requests", namespace, top_k: 5,
  }));
  check(`${transport}: memory_search finds it first`, found.memories[0]?.id === written.memory_id, found);

  const batch = structured(await call("memory_write_batch", {
    memories: [
      { content: "The team deploys on Tuesdays", namespace },
      { content: "The staging database is restored every Sunday night", namespace },
    ],
  }));
  check(`${transport}: memory_write_batch stores both`,
    batch.results?.length === 2 && batch.results.every((r) => r.status === "stored"), batch);

  const bad = await call("memory_write", { content: "x", importance: 7 });
  check(`${transport}: bad importance is a tool error naming the field`,
    bad.isError === true && bad.content[0].text.includes("importance"), bad);

  const forgotten = structured(await call("memory_forget", { memory_id: written.memory_id }));
  check(`${transport}: memory_forget forgets`,
    forgotten.forgotten === 1 && forgotten.ids?.[0] === written.memory_id, forgotten);
  const after = structured(await call("memory_search", { query: "pull requests every morning", namespace }));
  check(`${transport}: a forgotten memory is not returned`,
    !after.memories.some((m) => m.id === written.memory_id), after);

  // A correction retires what it corrects; the result says so.
  const revise = `${namespace}-revise`;
  const older = structured(await call("memory_write", {
    content: "The user is allergic to penicillin", memory_type: "semantic",
    namespace: revise, occurred_at: "2025-03-01T10:00:00Z",
  }));
  const newer = structured(await call("memory_write", {
    content: "The user is not allergic to penicillin", memory_type: "semantic",
    namespace: revise, occurred_at: "2025-03-04T10:00:00Z",
  }));
  check(`${transport}: a negation retires the older memory`,
    newer.reason === "update:polarity" && newer.superseded?.[0] === older.memory_id, newer);

  const fresh = logged.slice(before);
  check(`${transport}: the SDK logged nothing (no schema warnings)`, fresh.length === 0, fresh);
}

async function overStdio(dataDir) {
  const transport = new StdioClientTransport({
    command: BINARY, args: ["mcp", "--data-dir", dataDir], env: { ...process.env }, stderr: "ignore",
  });
  const client = new Client({ name: "hindsight-ts-check", version: "1.0.0" });
  await client.connect(transport);
  try {
    await exercise(client, "stdio");
  } finally {
    await client.close();
  }
}

function portOpen(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => { socket.end(); resolve(true); });
    socket.on("error", () => resolve(false));
  });
}

async function waitForEndpoint(dataDir, child) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hindsight serve exited with ${child.exitCode}`);
    try {
      const endpoint = JSON.parse(readFileSync(join(dataDir, "endpoint.json"), "utf8"));
      const url = new URL(endpoint.url);
      if (await portOpen(url.hostname, Number(url.port))) return endpoint;
    } catch {
      // not yet written
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("hindsight serve published no endpoint");
}

async function overHttp(dataDir) {
  const child = spawn(BINARY, ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  try {
    const endpoint = await waitForEndpoint(dataDir, child);
    // `serve` wants a bearer token; the operator's is in the endpoint file it publishes.
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
    });
    const client = new Client({ name: "hindsight-ts-check", version: "1.0.0" });
    await client.connect(transport);
    try {
      await exercise(client, "http");
    } finally {
      await client.close();
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
  }
}

print(`@modelcontextprotocol/sdk ${sdkVersion}`);
for (const [name, run] of [["stdio", overStdio], ["http", overHttp]]) {
  const dir = mkdtempSync(join(tmpdir(), "hindsight-ts-"));
  try {
    await run(dir);
  } catch (error) {
    // A transport that fails counts as a failure, never a skip.
    check(`${name}: session completes`, false, String(error?.stack ?? error));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
print(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed ? 1 : 0);
