// /metrics gzip'd for scrapers that ask for it (Prometheus does): the text compresses about
// tenfold. zlib compresses on libuv's threadpool, a chunk at a time, so the event loop only hands
// it chunks and takes its output; a render is compressed once, however many scrapers read it.
import { once } from "node:events";
import { constants, createGzip } from "node:zlib";
import type { Chunks, Render } from "./metrics-render.js";

/**
 * Whether an Accept-Encoding header takes gzip (RFC 9110, 12.5.3): named (or x-gzip), else by
 * `*`, with a weight above 0.
 */
export function acceptsGzip(header: string | undefined): boolean {
  let any = false;
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [coding, ...params] = part.split(";").map((p) => p.trim());
    const q = params.find((p) => p.startsWith("q="));
    const takes = q === undefined || Number(q.slice(2)) > 0;
    if (coding === "gzip" || coding === "x-gzip") return takes;
    if (coding === "*") any = takes;
  }
  return any;
}

/**
 * Gzips `render` into `out` as the render is written. Its fastest level: Prometheus' text is so
 * repetitive that it still compresses about tenfold, for a fraction of the default level's CPU.
 */
export async function gzipInto(render: Render, out: Chunks): Promise<void> {
  // The render's blocks stay unreused while zlib may still be reading them.
  render.open();
  const gz = createGzip({ level: constants.Z_BEST_SPEED });
  gz.on("data", (b: Buffer) => out.add(b));
  const ended = once(gz, "end");
  ended.catch(() => undefined);
  try {
    for await (const chunk of render.read()) if (!gz.write(chunk)) await once(gz, "drain");
    gz.end();
    await ended;
    out.end();
  } catch (err) {
    gz.destroy();
    out.end(err);
  } finally {
    render.close();
  }
}
