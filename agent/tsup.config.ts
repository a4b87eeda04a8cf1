// The npm package: one ESM and one CommonJS bundle of src/index.ts with bundled declarations.
// What the agent imports from shared/ is compiled in (the package holds nothing outside dist/);
// its npm dependencies stay external and are installed beside it.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm", "cjs"],
  platform: "node",
  target: "node20",
  dts: true,
  // import.meta.url in the CommonJS build (the identity's package lookup).
  shims: true,
  clean: true,
  // Names kept: a leak report's stack and a thrown error's class read as in the source.
  keepNames: true,
  sourcemap: false,
  splitting: false,
  treeshake: true,
});
