// The viewer in headless Chromium: for each kind of file `kinema view` shows, start the server on
// a free port, load the page, wait for its state, check it, and check that a screenshot of the
// canvas (grid and overlays hidden) has pixels other than the background. Also the server's
// refusals: a bad file, an address other than the loopback, paths it must not serve.
//
//   node viewer/test/browser_test.mjs KINEMA_EXE SOURCE_DIR WORK_DIR
//
// Exits 0 when every case passes, 1 on a failure; prints "SKIP: …" and exits 77 only when
// there is no Chromium at all (ctest reports it as skipped).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';

const [kinema, source, work] = process.argv.slice(2);
if (!kinema || !source || !work) {
  console.error('usage: node browser_test.mjs KINEMA_EXE SOURCE_DIR WORK_DIR');
  process.exit(2);
}
const chromium = process.env.KINEMA_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  console.log(`SKIP: no Chromium at ${chromium} (apt-get install chromium; scripts/setup.sh does)`);
  process.exit(77);
}
const { chromium: playwright } = await import('playwright-core').catch((e) => {
  console.error(`no playwright-core in viewer/node_modules (bash scripts/setup.sh installs it): ${e.message}`);
  process.exit(1);
});

fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const data = path.join(source, 'tests/data');
const demo = path.join(source, 'data/demo');
const at = (name) => path.join(work, name);
let failures = 0;
const check = (ok, what) => {
  if (!ok) failures++;
  console.log(`${ok ? '  ok  ' : '  FAIL'} ${what}`);
  return ok;
};

function run(args, what) {
  const r = spawnSync(kinema, ['--quiet', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what}: kinema ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

// ---- the files: tests/data as it is, kinema's own formats made with the CLI ------------------
const t0 = Date.now();
fs.writeFileSync(at('sparks.json'), JSON.stringify({
  duration: 1, fps: 30, colliders: [{ shape: 'plane' }],
  particles: { emitters: [{ rate: 300, velocity: [0, 3, 0], spread: 0.5, lifetime: 0.8 }] },
}));
run(['sim', at('sparks.json'), '-o', at('sparks.pc2')], 'particles');
fs.writeFileSync(at('hair.json'), JSON.stringify({
  duration: 1, fps: 30, colliders: [{ shape: 'plane' }],
  hair: { roots: [[0, 1, 0], [0.1, 1, 0], [0.2, 1, 0.05]], direction: [1, 0, 0], segments: 6,
    children: 3 },
}));
run(['sim', at('hair.json'), '-o', at('hair.pc2')], 'hair');
fs.writeFileSync(at('cloth.json'), JSON.stringify({
  duration: 1, fps: 30, rate: 60,
  colliders: [{ shape: 'sphere', centre: [0, 0.45, 0], radius: 0.45 }, { shape: 'plane' }],
  cloth: [{ name: 'drape', grid: { columns: 16, rows: 16, width: 1.2, height: 1.2,
    corner: [-0.6, 1.1, -0.6], u: [1, 0, 0], v: [0, 0, 1] },
  material: { stretch_stiffness: 'inextensible', bend_stiffness: 2 } }],
}));
run(['sim', at('cloth.json'), '-o', at('cloth.glb')], 'cloth');
run(['ik', 'feet', path.join(demo, 'walk.bvh'), '--ground', path.join(demo, 'stairs.obj'), '--follow-ground',
  '-o', at('walk_stairs.glb')], 'feet on stairs');
run(['retarget', path.join(demo, 'walk.bvh'), '--onto', path.join(data, 'vrm/Godette_vrm_v4.vrm'),
  '-o', at('walk.vrm')], 'a walk on a VRM');
const bvh = path.join(data, 'bvh/cmu_iclone_cc3/007_12.bvh');
run(['match', 'build', path.join(data, 'bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh'), bvh,
  '--skip-frames', '1', '-o', at('db.kmm')], 'motion-matching database');
fs.writeFileSync(at('stick.json'), JSON.stringify({ duration: 4, keys: [
  { time: 0, direction: [0, 1], speed: 1.3 }, { time: 2, direction: [-1, 0], speed: 1.3 }] }));
console.log(`inputs made in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

// ---- the server -------------------------------------------------------------------------------
function serve(files) {
  return new Promise((resolve, reject) => {
    const child = spawn(kinema, ['view', '--port', '0', '--no-open', '--quiet', ...files],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) resolve({ child, url: m[0], port: Number(m[1]) });
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => reject(new Error(`kinema view exited ${code}: ${err}`)));
  });
}

function get(port, urlPath, host = `127.0.0.1:${port}`) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, headers: { Host: host } },
      (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
    req.on('error', reject);
    req.end();
  });
}

// ---- the screenshot: a PNG decoded here, its pixels compared with the background ----------------
function decodePng(buffer) {
  let pos = 8, width = 0, height = 0, colourType = 0;
  const idat = [];
  while (pos < buffer.length) {
    const length = buffer.readUInt32BE(pos);
    const type = buffer.toString('ascii', pos + 4, pos + 8);
    const body = buffer.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error('PNG: 8-bit, not interlaced expected');
      colourType = body[9];
    } else if (type === 'IDAT') idat.push(body);
    pos += 12 + length;
  }
  const channels = { 2: 3, 6: 4 }[colourType];
  if (!channels) throw new Error(`PNG colour type ${colourType}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, pixels };
}

const background = [0x1d, 0x20, 0x26];
function drawnPixels(png) {
  const { width, height, channels, pixels } = decodePng(png);
  let n = 0;
  for (let k = 0; k < width * height; k++) {
    const o = k * channels;
    if (Math.abs(pixels[o] - background[0]) + Math.abs(pixels[o + 1] - background[1]) +
        Math.abs(pixels[o + 2] - background[2]) > 30) n++;
  }
  return { n, total: width * height };
}

// ---- the cases --------------------------------------------------------------------------------
const cases = [
  { name: 'skinned character (glTF)', files: [path.join(data, 'gltf/RiggedFigure.glb')],
    check: (s) => s.files[0].kind === 'gltf' && s.files[0].skinnedMeshes >= 1 &&
      s.files[0].clips.length >= 1 && s.files[0].frames > 1 },
  { name: 'VRM with spring bones, walking', files: [at('walk.vrm')],
    check: (s) => s.files[0].kind === 'vrm' && s.files[0].springJoints > 0 &&
      s.files[0].clips.length === 1 && s.files[0].frames > 10 && s.files[0].springBendDegrees > 1 },
  { name: 'BVH skeleton', files: [bvh],
    check: (s) => s.files[0].kind === 'bvh' && s.files[0].joints > 10 && s.files[0].frames > 10 &&
      s.duration > 1 },
  { name: 'motion matching along a stick', files: [at('db.kmm'), at('stick.json')],
    check: (s) => s.files[0].kind === 'match' && s.files[0].frames === 121 &&
      s.files[0].searches > 0 && s.files[0].transitions > 0 && s.files[0].joints > 10 },
  { name: 'IK feet goals on stairs', files: [at('walk_stairs.glb'), path.join(demo, 'stairs.obj')],
    check: (s) => s.files[0].kind === 'gltf' && s.files[1].kind === 'ground' &&
      s.files[1].legs === 2 && s.files[1].goalFrames > 30 },
  { name: 'particle cache (PC2 + sidecar)', files: [at('sparks.pc2')],
    check: (s) => s.files[0].kind === 'points' && s.files[0].samples === 31 && s.files[0].alive > 0 },
  { name: 'hair cache (PC2 + OBJ strands)', files: [at('hair.pc2')],
    check: (s) => s.files[0].kind === 'points' && s.files[0].strands && s.files[0].samples === 31 },
  { name: 'cloth cache (GLB morph targets)', files: [at('cloth.glb')],
    check: (s) => s.files[0].kind === 'gltf' && s.files[0].morphTargets > 0 && s.files[0].frames > 1 },
  { name: 'several clips, chosen (glTF with its .bin)', files: [path.join(data, 'gltf/interpolation_test.gltf')],
    check: (s) => s.files[0].clips.length >= 2, choose: true },
];

const browser = await playwright.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const shots = process.env.KINEMA_VIEWER_SHOTS || work;
try {
  for (const c of cases) {
    console.log(`${c.name}: ${c.files.map((f) => path.basename(f)).join(' ')}`);
    const { child, url } = await serve(c.files);
    const page = await browser.newPage({ viewport: { width: 960, height: 600 } });
    const logs = [];
    page.on('console', (m) => { if (m.type() === 'error') logs.push(m.text()); });
    page.on('pageerror', (e) => logs.push(String(e)));
    try {
      await page.goto(url);
      await page.waitForFunction(() => window.kinemaViewer &&
        (window.kinemaViewer.state().ready || window.kinemaViewer.state().error), null,
      { timeout: 60000 });
      let s = await page.evaluate(() => window.kinemaViewer.state());
      if (!check(!s.error && s.ready, `loads (${s.error || 'ready'})${logs.length ? ' ' + logs.join('; ') : ''}`)) continue;
      // It plays: time moves on its own.
      await page.waitForFunction((t) => window.kinemaViewer.state().time !== t, s.time, { timeout: 10000 })
        .then(() => check(true, 'plays'), () => check(s.duration === 0, 'plays'));
      await page.evaluate(() => window.kinemaViewer.seek(window.kinemaViewer.state().duration * 0.4));
      s = await page.evaluate(() => window.kinemaViewer.state());
      check(!s.playing, 'pauses on seek');
      check(c.check(s), `state ${JSON.stringify(s.files.map(({ clips, ...f }) => ({ ...f, clips: clips.length })))}`);
      if (c.choose) {
        const chosen = await page.evaluate(() => window.kinemaViewer.selectClip(0, 1) &&
          window.kinemaViewer.state().files[0].clip);
        const options = await page.locator('#clip option').count();
        check(chosen === 1 && options === s.files[0].clips.length,
          `clip chooser: ${options} clips, clip 1 chosen`);
      }
      await page.evaluate(() => window.kinemaViewer.showGrid(false));
      await page.addStyleTag({ content: '#files, #error { display: none !important; }' });
      await page.waitForFunction((n) => window.kinemaViewer.state().framesDrawn > n + 2, s.framesDrawn);
      const png = await page.locator('#view canvas').screenshot();
      const shot = path.join(shots, `viewer_${c.files.map((f) => path.parse(f).name).join('_')}.png`);
      fs.writeFileSync(shot, png);
      const { n, total } = drawnPixels(png);
      check(n > 300, `screenshot has ${n} of ${total} pixels drawn (${path.basename(shot)})`);
    } catch (e) {
      check(false, String(e.message || e));
    } finally {
      await page.close();
      child.kill('SIGTERM');
    }
  }
} finally {
  await browser.close();
}

// ---- what the server refuses --------------------------------------------------------------------
console.log('refusals');
{
  const { child, port } = await serve([bvh]);
  try {
    check((await get(port, '/api/file/0/007_12.bvh')).status === 200, 'serves the named file');
    for (const p of ['/api/file/0/../../../etc/passwd', '/etc/passwd', '/three/package.json',
      '/api/file/1/x.bvh'])
      check((await get(port, p)).status === 404, `404 for ${p}`);
    check((await get(port, '/api/files', `evil.example:${port}`)).status === 403,
      '403 for another Host (DNS rebinding)');
  } finally {
    child.kill('SIGTERM');
  }
}
const refuse = (args, code, says, what) => {
  const r = spawnSync(kinema, ['view', '--no-open', '--port', '0', ...args], { encoding: 'utf8', timeout: 30000 });
  check(r.status === code && r.stderr.includes(says), `${what}: exit ${r.status}, ${r.stderr.trim()}`);
};
fs.writeFileSync(at('broken.bvh'), 'HIERARCHY\nROOT a\n{\n');
refuse([at('broken.bvh')], 2, 'broken.bvh', 'a broken file');
refuse([at('missing.glb')], 2, 'missing.glb', 'a missing file');
refuse(['--bind', '0.0.0.0', bvh], 1, '127.0.0.1 only', 'another address');
refuse([at('sparks.json')], 1, 'sparks.json', 'a kind it does not show');
refuse([at('db.kmm')], 1, 'PATH.json', 'a database without its stick path');

console.log(failures ? `${failures} FAILED` : 'all passed', `in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(failures ? 1 : 0);
