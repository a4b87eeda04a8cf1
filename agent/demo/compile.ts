// Run from source, the demo's service processes would each load tsx: an esbuild helper process
// and a module-hooks thread per child, which cost more CPU at idle than the service itself
// (measured ~0.8 % of a core per child against ~0.6 % for the whole service in plain JS). So
// the launcher transpiles service.ts and everything it imports, once per version of the
// sources, into <package root>/node_modules/.cache/semscope-demo/<hash>/, and the children run
// plain node on that. Inline source maps name the original .ts files, so stacks (leak reports)
// point at the real source lines under --enable-source-maps.
//
// Per-file transpilation is sound here because the project compiles with isolatedModules and
// verbatimModuleSyntax. The cache is keyed by the content of every file in the import graph;
// a reused tree is checked against that hash before use, and older trees are pruned.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";

const CACHE_NAME = "semscope-demo";
const POINTER = "current.json";
const COMPLETE = ".complete";
/** Trees other than the current one are removed once this old (another launcher may still use one). */
const PRUNE_AFTER_MS = 60 * 60_000;

interface Pointer {
  hash: string;
  /** Source files, relative to the root. */
  files: string[];
}

export interface CompiledService {
  /** The transpiled entry point. */
  script: string;
  /** True when an up-to-date tree was already there. */
  reused: boolean;
}

function hashFiles(root: string, files: readonly string[]): string | undefined {
  const h = createHash("sha256");
  for (const f of [...files].sort()) {
    let text: Buffer;
    try {
      text = readFileSync(join(root, f));
    } catch {
      return undefined;
    }
    h.update(f).update("\0").update(text).update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

/** The nearest ancestor of `dir` (inclusive) holding node_modules, where dependencies resolve from. */
function packageRoot(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, "node_modules"))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** "./x.js" written in a .ts file means x.ts; JSON and anything else is taken as it is. */
function sourceOf(fromFile: string, specifier: string): string | undefined {
  const target = resolve(dirname(fromFile), specifier);
  if (target.endsWith(".js")) {
    const ts = `${target.slice(0, -3)}.ts`;
    if (existsSync(ts)) return ts;
  }
  return existsSync(target) ? target : undefined;
}

type TypeScript = typeof import("typescript");

/** The import graph from `entry`: every relative import, followed; absolute paths. */
function importGraph(ts: TypeScript, entry: string): string[] {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".ts")) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith("./") && !fileName.startsWith("../")) continue;
      const src = sourceOf(file, fileName);
      if (src === undefined) throw new Error(`${relative(process.cwd(), file)}: cannot find ${fileName}`);
      todo.push(src);
    }
  }
  return [...seen];
}

function transpile(ts: TypeScript, file: string): string {
  const out = ts.transpileModule(readFileSync(file, "utf8"), {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
      sourceMap: true,
    },
  });
  const map = JSON.parse(out.sourceMapText ?? "{}") as { sources?: string[]; sourceRoot?: string };
  // Name the original file, wherever the JS ends up.
  map.sources = [pathToFileURL(file).href];
  delete map.sourceRoot;
  const code = out.outputText.replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n");
  return `${code}//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString("base64")}\n`;
}

function prune(cacheDir: string, keep: string): void {
  for (const name of readdirSync(cacheDir)) {
    if (name === keep || name === POINTER) continue;
    const path = join(cacheDir, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > PRUNE_AFTER_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Another launcher pruned it first.
    }
  }
}

/** Transpiles `entry` (a .ts file) and its imports; throws if it cannot (the caller falls back to tsx). */
export async function compileService(entry: string): Promise<CompiledService> {
  const root = packageRoot(dirname(entry));
  if (root === undefined) throw new Error("no node_modules above the demo: cannot place the compiled service");
  const cacheDir = join(root, "node_modules", ".cache", CACHE_NAME);
  const entryRel = relative(root, entry);
  const scriptIn = (hash: string): string => join(cacheDir, hash, entryRel.replace(/\.ts$/, ".js"));

  // Fast path: the sources named by the last build are unchanged (any new import changes the
  // importing file, so the file list cannot have gone stale unnoticed).
  try {
    const last = JSON.parse(readFileSync(join(cacheDir, POINTER), "utf8")) as Pointer;
    if (last.files.includes(entryRel) && hashFiles(root, last.files) === last.hash && existsSync(join(cacheDir, last.hash, COMPLETE))) {
      return { script: scriptIn(last.hash), reused: true };
    }
  } catch {
    // No usable pointer: build.
  }

  const ts = (await import("typescript")).default;
  const graph = importGraph(ts, entry);
  const files = graph.map((f) => relative(root, f));
  if (files.some((f) => f.startsWith(`..${sep}`))) throw new Error("the demo imports files outside its package root");
  const hash = hashFiles(root, files) as string;
  const target = join(cacheDir, hash);
  if (!existsSync(join(target, COMPLETE))) {
    const tmp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      for (const file of graph) {
        const rel = relative(root, file);
        const dest = join(tmp, file.endsWith(".ts") ? rel.replace(/\.ts$/, ".js") : rel);
        mkdirSync(dirname(dest), { recursive: true });
        writeFileSync(dest, file.endsWith(".ts") ? transpile(ts, file) : readFileSync(file));
      }
      writeFileSync(join(tmp, COMPLETE), "");
      try {
        renameSync(tmp, target);
      } catch (err) {
        // Another launcher finished the same tree first: use theirs.
        if (!existsSync(join(target, COMPLETE))) throw err;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const pointerTmp = join(cacheDir, `${POINTER}.${process.pid}`);
  writeFileSync(pointerTmp, JSON.stringify({ hash, files } satisfies Pointer));
  renameSync(pointerTmp, join(cacheDir, POINTER));
  prune(cacheDir, hash);
  return { script: scriptIn(hash), reused: false };
}
