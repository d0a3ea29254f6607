#!/usr/bin/env node
// check.mjs: signs MCP Inspector (v2, web UI) in to Kadu the way a person would, in headless Chromium.
//
// It starts its own Kadu and its own Inspector, each on fresh state in a temporary folder, and then:
//   1. opens the Inspector UI, adds a server (transport streamable-http, URL http://127.0.0.1:8080/mcp) and connects;
//   2. follows the OAuth flow the Inspector starts (PRM -> AS metadata -> dynamic registration -> Kadu's consent
//      page), takes a screenshot of the consent page and presses Approve;
//   3. waits until the Inspector is back on its /oauth/callback and shows the server as connected, lists the tools
//      (Kadu's catalog is empty for now, so an empty list is a pass) and takes a screenshot;
//   4. prints every HTTP exchange with Kadu (the browser's own navigations and the Inspector backend's fetches, read
//      from its MCP_LOG_FILE) and the negotiated protocol version; exits 0 only when every step passed.
// Both servers are stopped at the end, whatever happened.
//
// Run it with Node 22 (the Inspector v2 needs >= 22.19): see README.md beside this file.
//
// Environment (all optional):
//   TOOLS_PREFIX      npm prefix holding node_modules/@modelcontextprotocol/inspector and node_modules/playwright-core
//                     (default /tmp/kadu-inspector-tools)
//   CHROMIUM_PATH     Chromium executable (default /usr/bin/chromium, Debian's package `chromium`)
//   KADU_BIN          kadu binary (default <repo>/bin/kadu, built by `go tool task build`); not passed on to kadu
//   KADU_ADDR         address Kadu listens on (default 127.0.0.1:8080); the MCP URL is http://KADU_ADDR/mcp
//   KADU_ADMIN_ADDR   Kadu's admin address (default 127.0.0.1:9090)
//   INSPECTOR_PORT    the Inspector's web port, its CLIENT_PORT (default 6274); MCP Apps sandbox uses 6275
//   INSPECTOR_HOST    host the browser opens the Inspector UI on: 127.0.0.1 (default, as its banner prints) or localhost
//   MCP_URL           the server URL typed into the Inspector (default KADU_PUBLIC_URL or http://KADU_ADDR, + /mcp)
//   KADU_PUBLIC_URL   passed through to kadu (its public_url); the script then expects the consent page there
//   WORK_DIR          scratch folder for Kadu's data, the Inspector's HOME (its catalog), storage and logs; must not
//                     hold an earlier run's Inspector home (default: a new folder under /tmp, kept for its logs)
//   KADU_DATA_DIR     Kadu's --data-dir (default WORK_DIR/kadu-data; fresh, so new development signing keys)
//   SCREENSHOT_DIR    where inspector-consent.png and inspector-connected.png go (default <repo>/docs/clients)
//   PROTOCOL_ERA      if set (legacy | auto | modern), chosen in the server card's Settings -> Protocol Era before
//                     connecting; unset = the Inspector's default (Legacy: initialize with 2025-11-25)
//   STEP_TIMEOUT_MS   bound on every single wait (default 20000)
//   VERBOSE           if set, print every browser console message as it happens

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, mkdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const TOOLS_PREFIX = process.env.TOOLS_PREFIX || '/tmp/kadu-inspector-tools';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const KADU_BIN = process.env.KADU_BIN || path.join(repo, 'bin/kadu');
const KADU_ADDR = process.env.KADU_ADDR || '127.0.0.1:8080';
const KADU_ADMIN_ADDR = process.env.KADU_ADMIN_ADDR || '127.0.0.1:9090';
const INSPECTOR_PORT = process.env.INSPECTOR_PORT || '6274';
const WORK_DIR = process.env.WORK_DIR || mkdtempSync(path.join(tmpdir(), 'kadu-inspector-'));
const KADU_DATA_DIR = process.env.KADU_DATA_DIR || path.join(WORK_DIR, 'kadu-data');
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR || path.join(repo, 'docs/clients');
const PROTOCOL_ERA = process.env.PROTOCOL_ERA || '';
const T = Number(process.env.STEP_TIMEOUT_MS || 20000);
const VERBOSE = Boolean(process.env.VERBOSE);

const KADU_LISTEN = `http://${KADU_ADDR}`;
const KADU_ORIGIN = process.env.KADU_PUBLIC_URL || KADU_LISTEN;   // Kadu's public URL, and so its issuer
const MCP_URL = process.env.MCP_URL || `${KADU_ORIGIN}/mcp`;       // what the person types into the Inspector
const INSPECTOR_HOST = process.env.INSPECTOR_HOST || '127.0.0.1';  // the host the person opens the Inspector UI on
const INSPECTOR_ORIGIN = `http://${INSPECTOR_HOST}:${INSPECTOR_PORT}`;
const API_TOKEN = randomBytes(16).toString('hex');
const SERVER_ID = 'kadu';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`Node ${process.versions.node}: the Inspector v2 needs Node >= 22.19; run this script with Node 22's node.`);
  process.exit(2);
}
const requireTools = createRequire(path.join(TOOLS_PREFIX, 'node_modules/'));
const { chromium } = requireTools('playwright-core');
const inspectorPkg = path.join(TOOLS_PREFIX, 'node_modules/@modelcontextprotocol/inspector');
const inspectorBin = path.join(inspectorPkg, 'clients/launcher/build/index.js');
for (const [what, p] of [['kadu binary (KADU_BIN)', KADU_BIN], ['Inspector launcher', inspectorBin], ['Chromium (CHROMIUM_PATH)', CHROMIUM_PATH]]) {
  if (!existsSync(p)) { console.error(`missing ${what}: ${p}`); process.exit(2); }
}
const inspectorVersion = JSON.parse(readFileSync(path.join(inspectorPkg, 'package.json'), 'utf8')).version;

const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(2).padStart(6)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- child processes
const children = [];
function start(name, cmd, args, opts) {
  const out = path.join(WORK_DIR, `${name}.log`);
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let buf = '';
  const sink = (d) => { buf += d; writeFileSync(out, buf); };
  child.stdout.on('data', sink);
  child.stderr.on('data', sink);
  child.on('exit', (code, sig) => { child.exited = true; log(`${name} (pid ${child.pid}) exited: code=${code} signal=${sig}`); });
  child.output = () => buf;
  children.push({ name, child });
  log(`started ${name} (pid ${child.pid}); output in ${out}`);
  return child;
}
async function stopAll() {
  for (const { name, child } of [...children].reverse()) {
    if (child.exited) continue;
    // SIGINT, as Ctrl-C: kadu serve drains for http.drain_delay on SIGTERM only.
    try { process.kill(-child.pid, 'SIGINT'); } catch {}
    for (let i = 0; i < 50 && !child.exited; i++) await sleep(100);
    if (!child.exited) { try { process.kill(-child.pid, 'SIGKILL'); } catch {} log(`${name} killed`); }
  }
}
async function waitFor(what, fn, timeout = T) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// ---------------------------------------------------------------- results
const steps = [];
const step = (name, ok, detail = '') => { steps.push({ name, ok, detail }); log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`); };
const browserExchanges = [];   // top-level navigations / requests the browser itself made to Kadu
const consoleErrors = [];
let browser;
let shownVersion = '';

async function main() {
  log(`work dir ${WORK_DIR}; Inspector ${inspectorVersion}; Node ${process.versions.node}`);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });

  // Kadu, on embedded defaults, from the repo root (as `./bin/kadu serve` would be run).
  const kadu = start('kadu', KADU_BIN, ['serve', '--data-dir', KADU_DATA_DIR, '--addr', KADU_ADDR,
    '--admin-addr', KADU_ADMIN_ADDR, '--log-level', 'debug'], { cwd: repo, env: kaduEnv() });
  await waitFor('Kadu MCP endpoint', async () => {
    if (kadu.exited) throw new Error(`kadu exited: ${kadu.output()}`);
    const r = await fetch(`${KADU_LISTEN}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(2000) });
    return r.status === 401 && /resource_metadata=/.test(r.headers.get('www-authenticate') || '');
  });
  step('kadu serve answers POST /mcp with 401 + WWW-Authenticate', true);

  // The Inspector's web UI with its own API token (the URL carries it, as the banner prints it), its secrets in
  // memory, its catalog and storage in WORK_DIR, and every fetch it makes logged to MCP_LOG_FILE.
  const home = path.join(WORK_DIR, 'inspector-home');
  if (existsSync(home)) throw new Error(`${home} exists (an earlier run's catalog and OAuth state): use a new WORK_DIR`);
  mkdirSync(home, { recursive: true });
  const fetchLog = path.join(WORK_DIR, 'inspector-fetch.log');
  const insp = start('inspector', process.execPath, [inspectorBin, '--web'], {
    cwd: WORK_DIR,
    env: {
      ...process.env, HOME: home, MCP_STORAGE_DIR: path.join(home, 'storage'), MCP_INSPECTOR_SECRET_STORE: 'memory',
      MCP_AUTO_OPEN_ENABLED: 'false', MCP_INSPECTOR_API_TOKEN: API_TOKEN, CLIENT_PORT: INSPECTOR_PORT,
      MCP_LOG_FILE: fetchLog,
    },
  });
  await waitFor('Inspector banner', async () => {
    if (insp.exited) throw new Error(`inspector exited: ${insp.output()}`);
    return insp.output().includes('is up and running');
  }, 60000);
  const inspectorUrl = `${INSPECTOR_ORIGIN}/?MCP_INSPECTOR_API_TOKEN=${API_TOKEN}`;
  step('Inspector web UI started', true, INSPECTOR_ORIGIN);

  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH, timeout: T,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  ctx.setDefaultTimeout(T);
  const watch = (page) => {
    page.on('console', (m) => {
      if (VERBOSE) log(`console.${m.type()} @ ${page.url().split('?')[0]}: ${m.text().slice(0, 1000)}`);
      if (m.type() !== 'error' && m.type() !== 'warning') return;
      const text = m.text();
      // The Inspector's page links Google Fonts; this machine has no internet, so that one fails by design.
      if (/ERR_NAME_NOT_RESOLVED/.test(text)) return;
      consoleErrors.push(`${m.type()} @ ${page.url().split('?')[0]}: ${text.slice(0, 500)}`);
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror @ ${page.url().split('?')[0]}: ${e.message}`));
    page.on('response', async (r) => {
      if (!r.url().startsWith(KADU_ORIGIN) && !r.url().startsWith(new URL(MCP_URL).origin)) return;
      const req = r.request();
      browserExchanges.push({ method: req.method(), url: r.url(), status: r.status(), location: r.headers().location, type: req.resourceType() });
    });
    page.on('requestfailed', (r) => {
      if (r.url().startsWith(KADU_ORIGIN)) browserExchanges.push({ method: r.method(), url: r.url(), status: `failed: ${r.failure()?.errorText}` });
    });
  };
  const page = await ctx.newPage();
  watch(page);
  ctx.on('page', (p) => { if (p !== page) { log(`new tab/popup: ${p.url()}`); watch(p); } });

  await page.goto(inspectorUrl);
  await page.getByRole('button', { name: 'Add Servers' }).click();
  await page.getByRole('menuitem', { name: /Add manually/ }).click();
  await page.getByLabel('Server ID').fill(SERVER_ID);
  await page.getByRole('textbox', { name: 'Transport' }).click();
  await page.getByRole('option', { name: 'streamable-http' }).click();
  await page.getByLabel('URL').fill(MCP_URL);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  const toggle = page.getByRole('switch', { name: `Connect or disconnect "${SERVER_ID}"` });
  await toggle.waitFor({ state: 'attached' });
  step('server added in the UI (streamable-http)', true, MCP_URL);

  if (PROTOCOL_ERA) await setProtocolEra(page, PROTOCOL_ERA);

  // Connect: the Inspector gets 401, discovers, registers, and sends this tab to Kadu's consent page.
  // Mantine's switch input is visually hidden: click its label (the track), as a pointer would.
  await page.locator('label', { has: toggle }).click();
  // A failed connect shows only a short-lived toast ("Failed to connect to …" and the reason): keep what it said.
  const toasts = new Set();
  const toastPoll = setInterval(async () => {
    try {
      for (const t of await page.locator('.mantine-Notification-root').allInnerTexts()) toasts.add(t.replace(/\s+/g, ' ').trim());
    } catch {}
  }, 250);
  let consentPage;
  try {
    consentPage = await waitFor('navigation to Kadu /oauth/authorize (same tab or a new one)', async () =>
      ctx.pages().find((p) => p.url().startsWith(`${KADU_ORIGIN}/oauth/authorize`)));
  } catch (e) {
    clearInterval(toastPoll);
    await page.screenshot({ path: path.join(WORK_DIR, 'fail-connect.png') });
    const card = await page.locator('div', { has: toggle }).filter({ has: page.getByRole('button', { name: 'Clone' }) }).last()
      .innerText().catch(() => '');
    throw new Error(`${e.message}\nInspector toasts: ${[...toasts].join(' || ') || 'none seen'}\nserver card: ${card.replace(/\s+/g, ' ')}`);
  }
  clearInterval(toastPoll);
  const approve = consentPage.getByRole('button', { name: 'Approve' });
  await approve.waitFor();
  const consentTitle = await consentPage.title();
  const consentFields = await consentPage.$$eval('input:not([type=hidden]), select', (es) => es.map((e) => `${e.name || e.id}=${e.value}`));
  step('Kadu consent page shown', true, `${consentTitle}; ${consentFields.join(', ')}; ${consentPage === page ? 'same tab' : 'new tab'}`);
  await consentPage.screenshot({ path: path.join(SCREENSHOT_DIR, 'inspector-consent.png') });

  await approve.click();
  await waitFor('return to the Inspector', async () => ctx.pages().some((p) => p.url().startsWith(INSPECTOR_ORIGIN)) &&
    !ctx.pages().some((p) => p.url().startsWith(KADU_ORIGIN)), T).catch(async (e) => {
    const p = ctx.pages().find((x) => x.url().startsWith(KADU_ORIGIN));
    const body = p ? await p.innerText('body').catch(() => '') : '';
    throw new Error(`${e.message}\nstill on ${p?.url()}\n${body.slice(0, 1500)}`);
  });
  const back = ctx.pages().find((p) => p.url().startsWith(INSPECTOR_ORIGIN));
  const callback = browserExchanges.find((x) => x.location && x.location.startsWith(`${INSPECTOR_ORIGIN}/oauth/callback`));
  step('Approve redirects to the Inspector /oauth/callback with a code', Boolean(callback && /[?&]code=/.test(callback.location)),
    callback ? callback.location.replace(/code=[^&]+/, 'code=…').replace(/state=[^&]+/, 'state=…') : 'no redirect seen');

  // Connected: the server card (its switch on) reads "Connected" and the protocol version the Inspector negotiated.
  const backToggle = back.getByRole('switch', { name: `Connect or disconnect "${SERVER_ID}"` });
  const card = back.locator('div', { has: backToggle }).filter({ has: back.getByRole('button', { name: 'Clone' }) }).last();
  try {
    const cardText = await waitFor('the server card to read Connected', async () => {
      const txt = await card.innerText({ timeout: 1000 });
      return /(^|\s)Connected(\s|$)/.test(txt) && (await backToggle.isChecked()) ? txt : false;
    }, T);
    shownVersion = (cardText.match(/MCP (\d{4}-\d{2}-\d{2})/) || [])[1] || 'not shown';
    step('Inspector shows the server Connected', true, `card says "MCP ${shownVersion}"`);
  } catch (e) {
    await back.screenshot({ path: path.join(WORK_DIR, 'fail-connected.png') });
    const body = await back.innerText('body').catch(() => '');
    step('Inspector shows the server Connected', false, `${e.message}\n${body.slice(0, 1500)}`);
    throw e;
  }
  await sleep(500); // let the "Authorization complete" toast and the message list settle
  await back.screenshot({ path: path.join(SCREENSHOT_DIR, 'inspector-connected.png') });

  // Tools: the header's segmented control (Servers | Tools | Prompts | Resources) -> "Tools (N)".
  await back.getByText('Tools', { exact: true }).first().click();
  const heading = await waitFor('the Tools (N) heading', async () => {
    const h = back.getByRole('heading', { name: /^Tools \(\d+\)$/ });
    return (await h.count()) ? h.first().innerText() : false;
  }, T);
  await sleep(1000); // the view cross-fades
  await back.screenshot({ path: path.join(WORK_DIR, 'inspector-tools.png') });
  // kadu.read (the scope the 401 names) lists the read-only tools of the built-in bundles.
  const listed = Number(/\((\d+)\)/.exec(heading)?.[1] ?? 0);
  step('Tools view lists the tools', listed > 0, `${heading} (the tools kadu.read allows)`);
  step('screenshots written', true, `${SCREENSHOT_DIR}/inspector-consent.png, inspector-connected.png; Tools view in ${WORK_DIR}/inspector-tools.png`);
}

// kadu refuses to start on a KADU_* variable that names no configuration key, so KADU_BIN (this script's own) is
// left out of its environment; KADU_ADDR, KADU_ADMIN_ADDR, KADU_DATA_DIR and KADU_PUBLIC_URL are real keys.
function kaduEnv() {
  const env = { ...process.env };
  delete env.KADU_BIN;
  return env;
}

async function setProtocolEra(page, era) {
  // Server card -> Settings -> Options -> Protocol Era (Legacy = initialize 2025-11-25, Auto = server/discover then
  // fall back, Modern = 2026-07-28 only). The dialog saves as you change it.
  const card = page.locator('div', { has: page.getByRole('switch', { name: `Connect or disconnect "${SERVER_ID}"` }) }).filter({ hasText: 'Settings' }).last();
  await card.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('textbox', { name: 'Protocol Era' }).click();
  const options = await page.getByRole('option').allInnerTexts();
  const want = page.getByRole('option', { name: new RegExp(`^${era}`, 'i') });
  if (!(await want.count())) throw new Error(`no Protocol Era option "${era}"; offered: ${options.join(' | ')}`);
  await want.first().click();
  const chosen = await dialog.getByRole('textbox', { name: 'Protocol Era' }).inputValue();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'hidden' });
  step(`Protocol Era set to ${era}`, true, `${chosen} (offered: ${options.join(' | ')})`);
}

// ---------------------------------------------------------------- report
function report() {
  console.log('\n==== Browser ↔ Kadu (top-level navigations and form posts)');
  for (const x of browserExchanges) {
    const u = new URL(x.url);
    console.log(`  ${x.method.padEnd(4)} ${u.pathname}  → ${x.status}${x.location ? `  Location: ${x.location.split('?')[0]}${x.location.includes('?') ? '?' + [...new URL(x.location).searchParams.keys()].join('&') : ''}` : ''}`);
  }
  const fetchLog = path.join(WORK_DIR, 'inspector-fetch.log');
  console.log('\n==== Inspector backend ↔ Kadu (from its MCP_LOG_FILE)');
  const versions = new Set();
  if (existsSync(fetchLog)) {
    for (const line of readFileSync(fetchLog, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      let e; try { e = JSON.parse(line); } catch { continue; }
      const q = e.fetchRequest, s = e.fetchResponse;
      if (!q) continue;
      let rpc = '';
      try { const b = JSON.parse(q.body); rpc = b.method ? ` ${b.method}` : ''; if (b.params?.protocolVersion) rpc += ` (${b.params.protocolVersion})`; } catch {}
      const hv = q.headers?.['mcp-protocol-version'];
      // The Inspector logs response bodies of failures only; Kadu names the version it speaks in a response header.
      const sv = s?.headers?.['mcp-protocol-version'];
      const respVer = sv ? ` [response MCP-Protocol-Version: ${sv}]` : '';
      if (sv && s.status < 300) versions.add(sv);
      const u = new URL(q.url);
      console.log(`  [${e.category}] ${q.method.padEnd(4)} ${u.pathname}${rpc}${hv ? ` [MCP-Protocol-Version: ${hv}]` : ''}  → ${s ? s.status : 'no response'}${respVer}`);
    }
  } else console.log('  (no fetch log)');
  console.log(`\n==== Negotiated protocol version: Kadu's responses say ${[...versions].join(', ') || 'nothing'}; the Inspector's card says ${shownVersion || 'nothing'}`);
  console.log('\n==== Console errors/warnings (Google Fonts lookups filtered out)');
  for (const c of consoleErrors) console.log('  ' + c);
  if (!consoleErrors.length) console.log('  none');
  console.log('\n==== Steps');
  for (const s of steps) console.log(`  ${s.ok ? 'PASS' : 'FAIL'} ${s.name}`);
  console.log(`\nlogs: ${WORK_DIR}/kadu.log, inspector.log, inspector-fetch.log`);
}

// A throw inside an event handler, or Ctrl-C, must not leave Kadu or the Inspector running.
const emergency = (why) => { console.error(`\n${why}; stopping the servers`); stopAll().finally(() => process.exit(3)); };
process.on('uncaughtException', (e) => emergency(`uncaught: ${e.stack || e}`));
process.on('unhandledRejection', (e) => emergency(`unhandled rejection: ${e?.stack || e}`));
process.on('SIGINT', () => emergency('SIGINT'));
process.on('SIGTERM', () => emergency('SIGTERM'));

let failed = false;
const hardStop = setTimeout(() => { console.error('overall timeout (5 min)'); stopAll().finally(() => process.exit(3)); }, 300000);
try {
  await main();
} catch (e) {
  failed = true;
  console.error(`\nFAILED: ${e.stack || e.message}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  await stopAll();
  clearTimeout(hardStop);
  report();
}
failed ||= steps.some((s) => !s.ok);
console.log(failed ? '\nRESULT: FAIL' : '\nRESULT: PASS — MCP Inspector signed in to Kadu and listed tools');
process.exit(failed ? 1 : 0);
