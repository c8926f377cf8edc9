import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { stringify } from 'yaml';
import type { RouteOptions } from './index.js';
import { openApiMarkdown, type OpenApiDoc } from './openapi-md.js';

/** The OpenAPI 3.1 document, generated from the same schemas that validate requests. */
const openapi: FastifyPluginAsyncTypebox<RouteOptions> = async (app) => {
  let cache: { json: string; yaml: string; md: string } | undefined;
  const docs = () => {
    if (!cache) {
      const doc = app.swagger() as unknown as OpenApiDoc;
      cache = { json: JSON.stringify(doc, null, 2), yaml: stringify(doc, { aliasDuplicateObjects: false }), md: openApiMarkdown(doc) };
    }
    return cache;
  };
  const hide = { schema: { hide: true } };
  app.get('/openapi.json', hide, async (_req, reply) => reply.type('application/json; charset=utf-8').send(docs().json));
  app.get('/openapi.yaml', hide, async (_req, reply) => reply.type('application/yaml; charset=utf-8').send(docs().yaml));
  app.get('/openapi.md', hide, async (_req, reply) => reply.type('text/markdown; charset=utf-8').send(docs().md));
};

export default openapi;
