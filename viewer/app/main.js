// The page `kinema view` serves: loads every file the server lists (/api/files), plays them on
// one timeline, and reports its state as window.kinemaViewer.state() for tests.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { loaders } from './kinds.js';

const view = document.getElementById('view');
const playButton = document.getElementById('play');
const slider = document.getElementById('time');
const clock = document.getElementById('clock');
const clipSelect = document.getElementById('clip');
const fileList = document.getElementById('files');

// preserveDrawingBuffer: a screenshot of the canvas at any moment shows the last frame drawn.
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2026);
scene.add(new THREE.HemisphereLight(0xffffff, 0x444455, 2.0));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(3, 6, 4);
scene.add(sun);
const grid = new THREE.GridHelper(10, 20, 0x555a66, 0x33373f);
scene.add(grid);
const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
camera.position.set(2.5, 1.8, 3.5);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0.9, 0);

const items = [];  // { entry, item } in the server's order
const status = { ready: false, error: null, time: 0, playing: true };
let duration = 0;

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

function updateDuration() {
  duration = Math.max(0, ...items.map(({ item }) => item.duration || 0));
  slider.max = String(duration || 1);
}

// Frames everything loaded over the whole timeline (characters walk away from where they start):
// the camera looks at the middle of their bounds from the front.
function frameAll() {
  const box = new THREE.Box3();
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    for (const { item } of items) item.update(f * duration, 0);
    for (const { item } of items) {
      item.object.updateMatrixWorld(true);
      box.expandByObject(item.object, true);
    }
  }
  showTime(0, 0);
  if (box.isEmpty() || !isFinite(box.min.x)) return;
  const size = box.getSize(new THREE.Vector3()).length();
  const centre = box.getCenter(new THREE.Vector3());
  controls.target.copy(centre);
  const distance = Math.max(size, 0.5) * 1.2;
  camera.position.copy(centre).add(new THREE.Vector3(0.55, 0.35, 1).normalize().multiplyScalar(distance));
  camera.near = distance / 200;
  camera.far = distance * 50;
  camera.updateProjectionMatrix();
  grid.position.y = Math.min(0, box.min.y);
}

function fillClipChooser() {
  clipSelect.replaceChildren();
  items.forEach(({ entry, item }, f) => {
    if (item.clips.length < 2) return;
    const group = document.createElement('optgroup');
    group.label = entry.name;
    item.clips.forEach((name, c) => {
      const option = new Option(name, `${f}:${c}`, false, c === item.clip);
      group.appendChild(option);
    });
    clipSelect.appendChild(group);
  });
}

function showFiles() {
  fileList.replaceChildren(...items.map(({ entry, item }) => {
    const div = document.createElement('div');
    const b = document.createElement('b');
    b.textContent = entry.name;
    div.append(b, ` ${entry.kind}` + (item.clip >= 0 && item.clips.length ? ` · ${item.clips[item.clip]}` : '') +
      ` · ${item.info()}`);
    return div;
  }));
}

function showTime(t, dt) {
  status.time = t;
  for (const { item } of items) item.update(t, dt);
  slider.value = String(t);
  clock.textContent = `${t.toFixed(2)} / ${duration.toFixed(2)} s`;
}

function selectClip(file, clip) {
  const entry = items[file];
  if (!entry || clip < 0 || clip >= entry.item.clips.length) return false;
  entry.item.setClip(clip);
  updateDuration();
  showTime(Math.min(status.time, duration), 0);
  fillClipChooser();
  return true;
}

function setPlaying(playing) {
  status.playing = playing;
  playButton.textContent = playing ? '❚❚' : '▶';
}

playButton.addEventListener('click', () => setPlaying(!status.playing));
window.addEventListener('keydown', (e) => {
  if (e.code === 'Space') { setPlaying(!status.playing); e.preventDefault(); }
});
slider.addEventListener('input', () => { setPlaying(false); showTime(Number(slider.value), 0); });
clipSelect.addEventListener('change', () => {
  const [f, c] = clipSelect.value.split(':').map(Number);
  selectClip(f, c);
});

let last = performance.now();
let frames = 0, lastInfo = 0;
function tick(now) {
  const dt = Math.min((now - last) / 1000, 0.1);
  last = now;
  if (status.ready) {
    if (status.playing && duration > 0) showTime((status.time + dt) % duration, dt);
    else for (const { item } of items) if (item.update.length > 1) item.update(status.time, dt);
    if (now - lastInfo > 250) { showFiles(); lastInfo = now; }
  }
  controls.update();
  renderer.render(scene, camera);
  frames++;
  requestAnimationFrame(tick);
}

function fail(message) {
  status.error = message;
  const box = document.getElementById('error');
  box.hidden = false;
  box.textContent = message;
}

async function load() {
  const list = await (await fetch('/api/files')).json();
  for (const entry of list) {
    const load = loaders[entry.kind];
    if (!load) throw new Error(`${entry.name}: the page cannot show kind '${entry.kind}'`);
    try {
      const item = await load(entry);
      items.push({ entry, item });
      scene.add(item.object);
    } catch (e) {
      throw new Error(`${entry.name}: ${e.message || e}`);
    }
  }
  updateDuration();
  showTime(0, 0);
  frameAll();
  fillClipChooser();
  showFiles();
  status.ready = true;
}

window.kinemaViewer = {
  // What tests read: every file's kind, clips and frames, the time, whether it plays.
  state: () => ({
    ready: status.ready,
    error: status.error,
    time: status.time,
    duration,
    playing: status.playing,
    framesDrawn: frames,
    files: items.map(({ entry, item }) => ({
      name: entry.name,
      kind: entry.kind,
      clips: item.clips,
      clip: item.clip,
      frames: item.frames,
      duration: item.duration,
      ...item.state(),
    })),
  }),
  play: () => setPlaying(true),
  pause: () => setPlaying(false),
  seek: (t) => { setPlaying(false); showTime(Math.max(0, Math.min(t, duration)), 0); },
  selectClip,
  showGrid: (on) => { grid.visible = on; },
};

requestAnimationFrame(tick);
load().catch((e) => fail(String(e.message || e)));
