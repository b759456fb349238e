# syntax=docker/dockerfile:1
# The app's image (docs/deployment.md, "A container"): built in one stage, run from another with
# production dependencies only, as the unprivileged `node` user. Node's major is the one of the
# `node` dependency in package.json (test/system/container-files.test.ts checks both).

# --- build: every dependency, the server compiled, the client bundled ----------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# the image's Node runs the scripts; the `node` package's own Node 24 download is not needed here
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild esbuild
COPY tsconfig.json tsconfig.client.json vite.config.ts ./
COPY scripts ./scripts
COPY src ./src
RUN npx tsc -p tsconfig.json && node scripts/build-client.mjs

# --- runtime: production dependencies, the build's output, nothing else ----------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production APP_ENV=prod HOST=0.0.0.0 PORT=3000 LOG_FILE=off
WORKDIR /app
COPY package.json package-lock.json ./
# no install script runs: production needs none (the `node` package's is a Node download for
# machines without Node 24; this image has it)
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/public ./public
# the embedded database's directory when DATABASE_URL is unset (mount a volume there), and logs/
RUN mkdir -p data logs && chown node:node data logs
USER node
EXPOSE 3000
# the liveness probe: says only that the process answers (the database is readiness's business)
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# the flags of `npm start`; SIGTERM goes to node itself (PID 1 of the container), which drains
CMD ["node", "--max-semi-space-size=8", "--no-allocation-site-pretenuring", "--liftoff-only", "dist/server.js"]
