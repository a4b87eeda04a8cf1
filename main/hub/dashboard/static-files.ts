// Web mode: the built dashboard served from one folder. Paths are decoded, normalised and
// resolved (symlinks included) inside the folder or refused; a path with no extension that names
// no file gets index.html, so the dashboard's own routes survive a reload.
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, posix, sep } from "node:path";

const MIME: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".wasm": "application/wasm",
};

export function mimeOf(file: string): string {
  return MIME[extname(file).toLowerCase()] ?? "application/octet-stream";
}

export class StaticFiles {
  private constructor(private readonly root: string) {}

  /** Throws when `dir` is not a readable folder. */
  static async open(dir: string): Promise<StaticFiles> {
    const root = await realpath(dir);
    if (!(await stat(root)).isDirectory()) throw new Error(`${dir} is not a folder`);
    return new StaticFiles(root);
  }

  /** Serves GET/HEAD `pathname` (still percent-encoded); answers 400/403/404/405 itself. */
  async serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") return plain(res, 405, "method not allowed", { Allow: "GET, HEAD" });
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return plain(res, 400, "bad path");
    }
    if (decoded.includes("\0") || decoded.includes("\\")) return plain(res, 400, "bad path");
    // Normalised as a URL path first ("/a/../../b" → "/b"), then joined: nothing climbs out.
    const rel = posix.normalize(`/${decoded}`).replace(/^\/+/, "");
    let file = await this.resolve(rel === "" ? "index.html" : rel);
    if (file === null && extname(rel) === "") file = await this.resolve("index.html");
    if (file === null) return plain(res, 404, "not found");
    const info = await stat(file);
    const headers: Record<string, string | number> = {
      "Content-Type": mimeOf(file),
      "Content-Length": info.size,
      "X-Content-Type-Options": "nosniff",
      // No other page may frame the dashboard (a framed Acknowledge is one click away from a
      // stranger's page); the header for current browsers, the older one for the rest.
      "Content-Security-Policy": "frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      // Bundles under assets/ carry a content hash in their name; index.html must always be fresh.
      "Cache-Control": rel.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache",
    };
    res.writeHead(200, headers);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    const stream = createReadStream(file);
    stream.on("error", () => res.destroy());
    stream.pipe(res);
  }

  /** The real path of a regular file inside the root, or null. */
  private async resolve(rel: string): Promise<string | null> {
    const candidate = join(this.root, rel);
    if (!this.inside(candidate)) return null;
    try {
      let real = await realpath(candidate);
      let info = await stat(real);
      if (info.isDirectory()) {
        real = await realpath(join(real, "index.html"));
        info = await stat(real);
      }
      return info.isFile() && this.inside(real) ? real : null;
    } catch {
      return null;
    }
  }

  private inside(p: string): boolean {
    return p === this.root || p.startsWith(this.root.endsWith(sep) ? this.root : this.root + sep);
  }
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff", ...extra });
  res.end(text);
}
