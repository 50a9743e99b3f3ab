// Loads one of the project's own Node-API addons, `native/<dir>/build/Release/<name>.node`, built by the
// root package's install script (native/build.js). Where the build output is, relative to this file
// compiled into <out>/src/common/: native/ at the repository root when <out> is the repository's dist/,
// or native/ linked into an <out> built elsewhere with --outDir. Undefined when it is not built (no
// compiler at install time, another platform): callers fall back quietly.

import { createRequire } from "node:module";

export function loadNativeAddon<T>(dir: string, name: string): T | undefined {
  const load = createRequire(import.meta.url);
  for (const root of ["../../../native", "../../native"]) {
    try {
      return load(`${root}/${dir}/build/Release/${name}.node`) as T;
    } catch {
      // not built there: try the next
    }
  }
  return undefined;
}
