import react from '@vitejs/plugin-react';
import fw from 'fwjs/vite';
import { defineConfig } from 'vite';

// fw() serves the app's entries from this dev server, so the web app calls them on its own origin.
export default defineConfig({
  plugins: [react(), fw()],
});
