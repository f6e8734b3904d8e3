// Compile lethe's Kaitai Struct specs (.ksy) to Python with the npm build of
// the official compiler.
//
// Usage: node compile.mjs <out-dir> <spec.ksy>...
//
// The npm package `kaitai-struct-compiler` has no command-line entry point:
// it exports an object whose compile(language, parsedYaml, importer, debug)
// returns a promise of {fileName: source}. This driver parses each spec with
// js-yaml, hands the compiler an importer that resolves `imports:` by name
// from the directory of the spec being compiled (mode "rel") or from the
// first spec's directory (mode "abs"), and writes every returned file into
// <out-dir>. Each given spec is compiled on its own; the compiler also emits
// the specs it imports, so a file may be written more than once (same text).
//
// Exit status: 0 on success, 1 on a compile error (message on stderr),
// 2 on bad usage. The list of written files goes to stdout, one per line.

import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import process from "node:process";
import yaml from "js-yaml";

const require = createRequire(import.meta.url);
const compiler = require("kaitai-struct-compiler");

function usage(message) {
  process.stderr.write(`compile.mjs: ${message}\n`);
  process.stderr.write("usage: node compile.mjs <out-dir> <spec.ksy>...\n");
  process.exit(2);
}

function loadSpec(file) {
  const text = fs.readFileSync(file, "utf8");
  return yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA });
}

function importerFor(specDir, absDir) {
  return {
    importYaml(name, mode) {
      const base = mode === "abs" ? absDir : specDir;
      const file = path.resolve(base, `${name}.ksy`);
      try {
        return Promise.resolve(loadSpec(file));
      } catch (err) {
        return Promise.reject(new Error(`cannot import '${name}' (${file}): ${err.message}`));
      }
    },
  };
}

async function compileOne(file, outDir, absDir) {
  const spec = loadSpec(file);
  const importer = importerFor(path.dirname(file), absDir);
  const files = await compiler.compile("python", spec, importer, false);
  const written = [];
  for (const [name, source] of Object.entries(files)) {
    const target = path.join(outDir, name);
    fs.writeFileSync(target, source, "utf8");
    written.push(target);
  }
  return written;
}

async function main(argv) {
  if (argv.length < 2) {
    usage("need an output directory and at least one .ksy file");
  }
  const [outArg, ...specArgs] = argv;
  const outDir = path.resolve(outArg);
  fs.mkdirSync(outDir, { recursive: true });
  const specs = specArgs.map((spec) => path.resolve(spec));
  const absDir = path.dirname(specs[0]);
  for (const spec of specs) {
    if (!spec.endsWith(".ksy") || !fs.existsSync(spec)) {
      usage(`not a .ksy file: ${spec}`);
    }
  }
  const done = new Set();
  for (const spec of specs) {
    let written;
    try {
      written = await compileOne(spec, outDir, absDir);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      process.stderr.write(`compile.mjs: ${spec}: ${detail}\n`);
      process.exit(1);
    }
    for (const target of written) {
      if (!done.has(target)) {
        done.add(target);
        process.stdout.write(`${target}\n`);
      }
    }
  }
}

await main(process.argv.slice(2));
