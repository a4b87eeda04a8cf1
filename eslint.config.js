// Lint keeps each folder to what its runtime may import (docs/conventions.md).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

const appFolders = (...names) => names.map((n) => `**/${n}/**`);
/** What main/ outside main/electron and main/app may not import. */
const headless = [
  { group: ["electron"], message: "Only main/electron/ imports electron; the hub runs headless." },
  { group: appFolders("agent", "renderer"), message: "main/ may import only shared/." },
];
const nodeBuiltins = ["node:*", "fs", "path", "os", "child_process", "http", "net", "crypto", "async_hooks", "worker_threads", "events", "util"];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/out/**", "coverage/**", "docs/**", "renderer/dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["shared/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: nodeBuiltins, message: "shared/ runs anywhere: no Node imports." },
          { group: ["electron", "react", "react-dom", "socket.io", "socket.io-client", "uplot"], message: "shared/ imports only itself (and zod)." },
          { group: appFolders("agent", "main", "renderer"), message: "shared/ imports only itself." },
        ],
      }],
    },
  },
  {
    files: ["agent/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["electron", "react", "react-dom", "uplot", "socket.io"], message: "The agent runs inside the user's service." },
          { group: appFolders("main", "renderer"), message: "The agent may import only shared/." },
        ],
      }],
    },
  },
  {
    files: ["main/**/*.ts"],
    ignores: ["main/electron/**", "main/app/**"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          ...headless,
        ],
      }],
    },
  },
  {
    // Dashboards and replays serve their own sockets with the helpers in main/hub/socket/; what
    // agents send is ingest/'s alone.
    files: ["main/hub/dashboard/**/*.ts", "main/hub/recording/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          ...headless,
          { group: ["**/ingest/*"], message: "dashboard/ and recording/ do not import ingest/: socket helpers are in main/hub/socket/." },
        ],
      }],
    },
  },
  {
    // The core (registry, store pipeline, engine glue, the recording's line format) is what the
    // namespaces feed and read, recorders write and forwarders send: it imports none of them, so
    // ingest/, dashboard/, recording/ and forwarding/ -> core/ run one way.
    files: ["main/hub/core/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          ...headless,
          { group: ["**/ingest/*", "**/dashboard/*", "**/recording/*", "**/forwarding/*"], message: "core/ does not import ingest/, dashboard/, recording/ or forwarding/: they import core/." },
        ],
      }],
    },
  },
  {
    // The socket helpers know nothing of the hub: every namespace may use them.
    files: ["main/hub/socket/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          headless[0],
          { group: ["../*"], message: "main/hub/socket/ imports only Node, socket.io and itself." },
        ],
      }],
    },
  },
  {
    // The shell sees the hub through its public face only (main/hub/index.ts).
    files: ["main/electron/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: appFolders("agent", "renderer"), message: "main/ may import only shared/." },
          { group: ["**/hub/*", "!**/hub/index.js"], message: "Import the hub through main/hub/index.js only." },
        ],
      }],
    },
  },
  {
    files: ["main/app/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["electron"], message: "Only main/electron/ imports electron; main/app runs under plain Node in tests." },
          { group: appFolders("agent", "renderer"), message: "main/ may import only shared/." },
          { group: ["**/hub/*", "!**/hub/index.js"], message: "Import the hub through main/hub/index.js only." },
        ],
      }],
    },
  },
  {
    // IPC goes through the typed wrappers (ipc-main.ts, preload.ts), which check channel and sender.
    files: ["main/electron/**/*.ts"],
    ignores: ["main/electron/ipc-main.ts", "main/electron/preload.ts"],
    rules: {
      "no-restricted-syntax": ["error",
        { selector: "MemberExpression[object.name='ipcMain']", message: "Use the typed IPC wrappers in ipc-main.ts." },
        { selector: "ImportSpecifier[imported.name='ipcMain']", message: "Use the typed IPC wrappers in ipc-main.ts." },
        { selector: "CallExpression[callee.property.name='send'][callee.object.property.name='webContents']", message: "Send to the window through ipc-main.ts's typed sender." },
        { selector: "CallExpression[callee.property.name='send'][callee.object.name=/^(webContents|contents)$/]", message: "Send to the window through ipc-main.ts's typed sender." },
      ],
    },
  },
  {
    // Servers started for tests and benchmarks (redis-server, postgres): Node and nothing of ours,
    // so test/ and bench/ can both import them without one importing the other.
    files: ["scripts/support/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ group: appFolders("agent", "main", "renderer", "shared", "test", "bench"), message: "scripts/support/ imports only Node and npm packages." }],
      }],
    },
  },
  {
    files: ["bench/agent/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ group: appFolders("test"), message: "Benchmarks do not import tests: shared helpers live in scripts/support/." }],
      }],
    },
  },
  {
    files: ["renderer/**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: nodeBuiltins, message: "The renderer runs in a browser." },
          { group: ["electron"], message: "The renderer talks to main through the preload only." },
          { group: appFolders("agent", "main"), message: "renderer/ may import only shared/." },
        ],
      }],
    },
  },
);
