// Serves the built front end: the page shell (index.html, written here) and the esbuild bundle
// (app.js, app.css) from <build>/console-web next to the compiled server code. Nothing is fetched from
// another host: the page loads only these two files and the JSON API.

import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { HttpError } from "./router.js";

/** <outDir>/console-web: this module is <outDir>/src/console/http/static-files.js. */
export const WEB_DIR = fileURLToPath(new URL("../../../console-web/", import.meta.url));

const TYPES: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tributary console</title>
<link rel="stylesheet" href="/static/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/static/app.js"></script>
</body>
</html>
`;

export function sendIndex(res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
  });
  res.end(INDEX);
}

export async function sendAsset(res: ServerResponse, name: string): Promise<void> {
  const type = TYPES[name];
  if (!type) throw new HttpError(404, `no such file: ${name}`);
  let body: Buffer;
  try {
    body = await readFile(`${WEB_DIR}${name}`);
  } catch {
    throw new HttpError(404, `${name} is not built: run npm run build (esbuild writes ${WEB_DIR})`);
  }
  res.writeHead(200, { "content-type": type, "cache-control": "no-cache" });
  res.end(body);
}
