// Writes shim.js, the Worker's entry module, beside wasm-bindgen's index.js in the
// folder given, as worker-build 0.8.7 does (its main.rs: generate_handlers,
// add_export_wrappers): every function wasm-bindgen exports becomes a method of the
// entry point — `fetch` and the other event handlers called with the Worker's env and
// ctx — and every class is exported behind the proxy that rebuilds an instance after
// a critical error. Also writes package.json as worker-build leaves it.
//
// node scripts/worker/entry.mjs FOLDER NAME VERSION DESCRIPTION

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [folder, name, version, description] = process.argv.slice(2);
if (!folder || !name || !version) {
  console.error("usage: entry.mjs FOLDER NAME VERSION [DESCRIPTION]");
  process.exit(2);
}

// wasm-bindgen's own, not handlers.
const SYSTEM = new Set(["__wbg_reset_state", "__worker_init_state"]);
// Called by the runtime with (event, env, ctx).
const EVENTS = new Set(["fetch", "queue", "scheduled", "email", "connect"]);

const index = readFileSync(join(folder, "index.js"), "utf8");
const functions = [];
const classes = [];
for (const line of index.split("\n")) {
  const fn = line.match(/^export (?:async )?function\s*([\w$]+)\s*\(/);
  const renamed = line.match(/^export \{\s*[\w$]+ as ([\w$]+)\s*\}/);
  const cls = line.match(/^export class ([\w$]+)/);
  const named = fn?.[1] ?? renamed?.[1];
  if (named && !SYSTEM.has(named)) functions.push(named);
  if (cls) classes.push(cls[1]);
}
if (!functions.includes("fetch")) {
  console.error(`entry.mjs: no fetch handler among wasm-bindgen's exports in ${folder}`);
  process.exit(1);
}

const handlers = functions
  .map((fn) =>
    EVENTS.has(fn)
      ? `Entrypoint.prototype.${fn} = function ${fn} (arg) {\n` +
        `  return exports.${fn}.call(this, arg, this.env, this.ctx);\n}\n`
      : `Entrypoint.prototype.${fn} = exports.${fn};\n`,
  )
  .join("");
const template = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "shim.js"), "utf8");
const body = template.slice(template.indexOf("import "));
const exported = classes
  .map((cls) => `export const ${cls} = new Proxy(exports.${cls}, classProxyHooks);\n`)
  .join("");
writeFileSync(join(folder, "shim.js"), body.replace("$HANDLERS", handlers) + exported);

const pkg = {
  description,
  files: ["index_bg.wasm", "index.js", "index.d.ts"],
  main: "index.js",
  name,
  sideEffects: ["./index.js"],
  type: "module",
  version,
};
writeFileSync(join(folder, "package.json"), JSON.stringify(pkg, null, 2));
