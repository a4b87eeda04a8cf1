// The dashboard's build: root renderer/, output renderer/dist with relative URLs (base "./"),
// so the same files load from the hub's `/` in web mode and from the app's folder.
// `npm run dev:renderer` serves it with hot reload and proxies socket.io and the API to a hub
// (SEMSCOPE_HUB, default http://127.0.0.1:7420, e.g. `npm run hub -- --port 7420`).
// This file runs in Node at build time, not in the browser: the renderer's import rule does not apply.
// eslint-disable-next-line no-restricted-imports
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig, type ProxyOptions } from "vite";

const hub = process.env.SEMSCOPE_HUB ?? "http://127.0.0.1:7420";

// The hub only lets in its own origin (docs/protocol.md): the dev server speaks for the page.
const asHub: ProxyOptions = {
  target: hub,
  changeOrigin: true,
  configure: (proxy) => {
    proxy.on("proxyReq", (req) => {
      if (req.getHeader("origin") !== undefined) req.setHeader("origin", hub);
    });
    proxy.on("proxyReqWs", (req) => {
      if (req.getHeader("origin") !== undefined) req.setHeader("origin", hub);
    });
  },
};

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    // One ~410 kB chunk (React, uPlot, socket.io-client), loaded from the hub or from disk: no split needed.
    chunkSizeWarningLimit: 600,
  },
  server: {
    host: "127.0.0.1",
    port: 5173,
    proxy: {
      "/socket.io": { ...asHub, ws: true },
      "/api": asHub,
    },
  },
});
