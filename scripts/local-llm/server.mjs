// A small OpenAI-compatible chat server over llama.cpp (node-llama-cpp), for measuring
// hindsight's distill job against a real local model. What it serves:
//   POST /v1/chat/completions  messages, temperature, max_tokens / max_completion_tokens,
//                              response_format {type: json_schema | json_object | text};
//                              a json_schema becomes a llama.cpp grammar, so the reply is
//                              constrained to it token by token; a schema the grammar
//                              compiler cannot take is refused with 400, as vLLM and
//                              llama.cpp's own server do.
//   GET  /v1/models            the one loaded model
// Replies carry `usage` (prompt and completion tokens, from the runtime's token meter).
// One request is evaluated at a time (2 cores: a second would only halve both).
//
// Usage: node server.mjs --model FILE.gguf [--port 0] [--host 127.0.0.1] [--context 4096]
//        [--threads 1]
// It prints `listening http://HOST:PORT/v1` on stdout once the model is loaded.
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { getLlama, LlamaChat, LlamaGrammar, LlamaLogLevel, LlamaText } from "node-llama-cpp";

// node-llama-cpp's JSON-schema grammar lets the model indent with newlines and four spaces,
// and small models do: a three-draft reply took 509 tokens, two thirds of them whitespace.
// The same generator takes `allowNewLines: false, scopePadSpaces: 0`, but the package does not
// export it; it is loaded by path from the pinned 3.21.1 (falling back to the exported one).
const packageDir = path.dirname(createRequire(import.meta.url).resolve("node-llama-cpp"));
let compactGrammar = null;
try {
  const module = await import(pathToFileURL(path.join(packageDir, "utils/gbnfJson/getGbnfGrammarForGbnfJsonSchema.js")).href);
  compactGrammar = (schema) => module.getGbnfGrammarForGbnfJsonSchema(schema, { allowNewLines: false, scopePadSpaces: 0 });
} catch {
  compactGrammar = null;
}

const { values: args } = parseArgs({
  options: {
    model: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    context: { type: "string", default: "4096" },
    // One thread by default: llama.cpp's threads spin at each barrier, and with two of them on
    // a 2-core machine that is also building or testing, a request that takes 0.6 s alone
    // took 90 s (measured). Give --threads 2 on an idle machine.
    threads: { type: "string", default: "1" },
  },
});
if (!args.model) {
  console.error("server.mjs: --model FILE.gguf is required");
  process.exit(2);
}

const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({
  contextSize: Number(args.context),
  sequences: 1,
  ...(Number(args.threads) > 0 ? { threads: Number(args.threads) } : {}),
});
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence });
const modelId = path.basename(args.model, ".gguf");
const jsonGrammar = await llama.getGrammarFor("json");

// One evaluation at a time.
let queue = Promise.resolve();
function serialised(task) {
  const run = queue.then(task, task);
  queue = run.catch(() => {});
  return run;
}

class BadRequest extends Error {}

function history(messages) {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new BadRequest("messages: must be a non-empty array");
  }
  const items = messages.map((m, i) => {
    const text = typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? m.content.filter((p) => p.type === "text").map((p) => p.text).join("")
        : null;
    if (text === null) throw new BadRequest(`messages[${i}].content: must be text`);
    switch (m.role) {
      case "system":
      case "developer":
        return { type: "system", text };
      case "user":
        return { type: "user", text };
      case "assistant":
        return { type: "model", response: [text] };
      default:
        throw new BadRequest(`messages[${i}].role: ${JSON.stringify(m.role)} is not supported`);
    }
  });
  if (items[items.length - 1].type !== "user") {
    throw new BadRequest("messages: the last message must be the user's");
  }
  // The model's turn, to be generated.
  items.push({ type: "model", response: [] });
  return items;
}

// node-llama-cpp applies minLength / maxLength only to a schema whose type is exactly
// "string", so `{"type": ["string", "null"], "maxLength": 48}` (what OpenAI's strict mode wants
// for an optional field) would go unbounded; llama.cpp's own server bounds it. Rewrite such a
// type list as a oneOf of its members, each with the keywords that apply to it, and anyOf as
// oneOf (the grammar compiler takes only the latter; for a grammar the two are the same).
function nullableUnions(schema) {
  if (Array.isArray(schema)) return schema.map(nullableUnions);
  if (!schema || typeof schema !== "object") return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, nullableUnions(v)]));
  if (out.anyOf && !out.oneOf) {
    out.oneOf = out.anyOf;
    delete out.anyOf;
  }
  if (Array.isArray(out.type) && out.type.length > 1) {
    const { type, description, ...rest } = out;
    return {
      ...(description ? { description } : {}),
      oneOf: type.map((t) => (t === "string" ? { type: t, ...pick(rest, ["minLength", "maxLength"]) } : { type: t })),
    };
  }
  return out;
}

function pick(object, keys) {
  return Object.fromEntries(keys.filter((k) => k in object).map((k) => [k, object[k]]));
}

async function grammarFor(format) {
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return jsonGrammar;
  if (format.type === "json_schema") {
    const schema = format.json_schema?.schema;
    if (!schema || typeof schema !== "object") {
      throw new BadRequest("response_format.json_schema.schema: must be an object");
    }
    try {
      const constrained = nullableUnions(schema);
      if (compactGrammar) {
        return new LlamaGrammar(llama, {
          grammar: compactGrammar(constrained),
          stopGenerationTriggers: [LlamaText(["\n".repeat(4)])],
          trimWhitespaceSuffix: true,
        });
      }
      return await llama.createGrammarForJsonSchema(constrained);
    } catch (e) {
      throw new BadRequest(`response_format.json_schema.schema: ${e.message}`);
    }
  }
  throw new BadRequest(`response_format.type: ${JSON.stringify(format.type)} is not supported`);
}

async function complete(body) {
  const items = history(body.messages);
  const grammar = await grammarFor(body.response_format);
  const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 512);
  return serialised(async () => {
    await sequence.clearHistory();
    const before = sequence.tokenMeter.getState();
    const reply = await chat.generateResponse(items, {
      grammar,
      maxTokens,
      temperature: Number(body.temperature ?? 0),
      seed: body.seed ?? 0,
    });
    const used = sequence.tokenMeter.diff(before);
    const stop = reply.metadata.stopReason;
    if (stop === "maxTokens") {
      // What ran on to the cap, for whoever reads server.log.
      console.error(`reply cut off at ${maxTokens} tokens: ${JSON.stringify(reply.response.slice(0, 2000))}`);
    }
    return {
      id: `chatcmpl-${Date.now()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: modelId,
      choices: [{
        index: 0,
        finish_reason: stop === "maxTokens" ? "length" : "stop",
        message: { role: "assistant", content: reply.response },
      }],
      usage: {
        prompt_tokens: used.usedInputTokens,
        completion_tokens: used.usedOutputTokens,
        total_tokens: used.usedInputTokens + used.usedOutputTokens,
      },
    };
  });
}

function send(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function error(res, status, message) {
  send(res, status, { error: { message, type: status < 500 ? "invalid_request_error" : "server_error", param: null, code: null } });
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === "GET" && req.url === "/v1/models") {
      return send(res, 200, { object: "list", data: [{ id: modelId, object: "model", created: 0, owned_by: "local" }] });
    }
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      let body;
      try {
        body = JSON.parse(raw);
      } catch (e) {
        return error(res, 400, `the body is not JSON: ${e.message}`);
      }
      if (body.stream) return error(res, 400, "stream: not supported by this server");
      return send(res, 200, await complete(body));
    }
    return error(res, 404, `no route ${req.method} ${req.url}`);
  } catch (e) {
    if (e instanceof BadRequest) return error(res, 400, e.message);
    console.error(e);
    return error(res, 500, String(e?.message ?? e));
  }
});

server.listen(Number(args.port), args.host, () => {
  const { address, port } = server.address();
  console.log(`listening http://${address}:${port}/v1`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
