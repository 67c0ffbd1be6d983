// The dashboard's build (build/web.mjs runs it; `npm run web:dev` serves it with hot reload).
// Output: web/dist/, served by the API process (api/web/plugin.ts). Hashed file names under
// assets/ let the server cache them for a year; index.html is the only file that is revalidated.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be one more script for browsers that all support modulepreload now.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    // `npm run web:dev`: the API runs on :3000 (npm start); the dev server proxies to it.
    proxy: { '/api': 'http://localhost:3000', '/auth': 'http://localhost:3000' },
  },
});
