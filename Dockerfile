# imaging-services in one container: gateway, REST API, MCP servers, web console and the embedded identity
# provider, with the SQLite store and the generated secrets in the volume /var/lib/imaging. The image holds
# the npm package (what `npm install -g imaging-services` installs), with the dependencies of
# package-lock.json. From the repository root:
#   docker build -t imaging-services .
#   docker run -d --name imaging -p 8090:8090 -v imaging-data:/var/lib/imaging imaging-services
#   docker logs imaging            # the console's URL and the admin's one-time password
# Elsewhere than on this machine, give the URL clients use: -e PUBLIC_URL=https://imaging.example.com
# The deployment example (deploy/compose.yaml, deploy/kubernetes/) runs this image too.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc tsconfig.json tsconfig.build.json README.md ./
COPY scripts ./scripts
COPY src ./src
# npm ci builds dist/ (the service and the console: the prepare script); the package is what npm pack
# takes of it, run on the production dependencies only.
RUN npm ci --no-audit --no-fund \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir -p /opt/imaging-services \
 && tar -xzf /tmp/imaging-services-*.tgz -C /opt/imaging-services --strip-components=1 \
 && npm prune --omit=dev --no-audit --no-fund \
 && mv node_modules /opt/imaging-services/

FROM node:24-bookworm-slim
COPY --from=build /opt/imaging-services /opt/imaging-services
RUN ln -s /opt/imaging-services/dist/cli/main.js /usr/local/bin/imaging-services \
 && ln -s /opt/imaging-services/dist/cli/main.js /usr/local/bin/imaging \
 && mkdir -p /var/lib/imaging && chown node:node /var/lib/imaging
ENV NODE_ENV=production IMAGING_DATA_DIR=/var/lib/imaging PUBLIC_URL=http://localhost:8090
USER node
WORKDIR /var/lib/imaging
VOLUME /var/lib/imaging
EXPOSE 8090
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8090/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["imaging-services"]
CMD ["start"]
