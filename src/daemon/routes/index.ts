import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context/index.js';
import health from './health.js';
import openapi from './openapi.js';
import catalog from './catalog.js';
import wallet from './wallet.js';
import gatewayChat from './gateway-chat.js';
import gatewayOpenAi from './gateway-openai.js';
import gatewayAnthropic from './gateway-anthropic.js';
import proxy from './proxy.js';
import smart from './smart.js';
import smartModels from './smart-models.js';
import entitlements from './entitlements.js';
import aliases from './aliases.js';
import skillsRead from './skills-read.js';
import skillsPublish from './skills-publish.js';
import skillsOwner from './skills-owner.js';
import skillsVersions from './skills-versions.js';
import skillsInstall from './skills-install.js';
import skillsScan from './skills-scan.js';
import skillKeys from './skill-keys.js';
import oauth from './oauth.js';
import oauthToken from './oauth-token.js';
import oauthDiscovery from './oauth-discovery.js';
import portalSession from './portal-session.js';
import portalSpend from './portal-spend.js';
import portalKeys from './portal-keys.js';
import keys from './keys.js';
import portalAccount from './portal-account.js';
import account from './account.js';
import portalWeb from './portal-web.js';
import skillsWeb from './skills-web.js';
import creatorWeb from './creator-web.js';
import requests from './requests.js';
import activityWeb from './activity-web.js';

/**
 * The route table: every route group is one file, registered here. API routes live
 * under /api; the OIDC discovery document and the web portal's pages (dashboard,
 * /skills, /creator, /activity) at the root.
 */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const api = async (scope: FastifyInstance) => {
    await scope.register(health, { ctx });
    await scope.register(openapi, { ctx });
    await scope.register(catalog, { ctx });
    await scope.register(wallet, { ctx });
    await scope.register(gatewayChat, { ctx });
    await scope.register(gatewayOpenAi, { ctx });
    await scope.register(gatewayAnthropic, { ctx });
    await scope.register(proxy, { ctx });
    await scope.register(smart, { ctx });
    await scope.register(smartModels, { ctx });
    await scope.register(entitlements, { ctx });
    await scope.register(aliases, { ctx });
    await scope.register(skillsRead, { ctx });
    await scope.register(skillsPublish, { ctx });
    await scope.register(skillsOwner, { ctx });
    await scope.register(skillsVersions, { ctx });
    await scope.register(skillsInstall, { ctx });
    await scope.register(skillsScan, { ctx });
    await scope.register(oauth, { ctx });
    await scope.register(oauthToken, { ctx });
    await scope.register(portalSession, { ctx });
    await scope.register(portalSpend, { ctx });
    await scope.register(portalKeys, { ctx });
    await scope.register(keys, { ctx });
    await scope.register(portalAccount, { ctx });
    await scope.register(account, { ctx });
    await scope.register(requests, { ctx });
  };
  await app.register(api, { prefix: '/api' });
  await app.register(oauthDiscovery, { ctx });
  await app.register(skillKeys, { ctx });
  await app.register(portalWeb, { ctx });
  await app.register(skillsWeb, { ctx });
  await app.register(creatorWeb, { ctx });
  await app.register(activityWeb, { ctx });
}

export interface RouteOptions {
  ctx: AppContext;
}
