// One loader per kind of file `kinema view` serves. Each returns an item:
//   { object (added to the scene), duration (s), frames, clips (names), clip (index),
//     setClip(i), update(t, dt) (show time t; dt is the real step, for spring bones),
//     info() (one line for the file list), state() (extra fields for tests) }
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { BVHLoader } from 'three/addons/loaders/BVHLoader.js';
import { VRMLoaderPlugin, VRMUtils } from '@pixiv/three-vrm';

const line = (color) => new THREE.LineBasicMaterial({ color });

// glTF animations through a mixer whose time is set, so that the timeline can scrub.
function mixerItem(root, animations) {
  const mixer = new THREE.AnimationMixer(root);
  const actions = animations.map((clip) => mixer.clipAction(clip));
  const item = {
    clips: animations.map((a, i) => a.name || `clip ${i}`),
    clip: animations.length ? 0 : -1,
    duration: animations.length ? animations[0].duration : 0,
    frames: 0,
    setClip(i) {
      actions.forEach((a) => a.stop());
      item.clip = i;
      if (i < 0 || i >= actions.length) return;
      actions[i].play();
      item.duration = animations[i].duration;
      item.frames = frameCount(animations[i]);
    },
    pose(t) {
      if (item.clip < 0) return;
      const a = actions[item.clip];
      a.time = item.duration > 0 ? t % item.duration : 0;
      mixer.update(0);
    },
  };
  item.setClip(item.clip);
  return item;
}

// Bones as lines from each node to its parent, in world space: for files without meshes (BVH,
// kinema's skeleton-only GLBs), where there is nothing else to see.
function nodeLines(root, colour) {
  const nodes = [];
  root.traverse((o) => { if (o !== root && o.parent && o.parent !== root) nodes.push(o); });
  const positions = new Float32Array(nodes.length * 6);
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  const lines = new THREE.LineSegments(geometry, line(colour));
  lines.frustumCulled = false;
  const a = new THREE.Vector3(), b = new THREE.Vector3();
  lines.refresh = () => {
    root.updateMatrixWorld(true);
    nodes.forEach((o, i) => {
      o.getWorldPosition(a);
      o.parent.getWorldPosition(b);
      positions.set([a.x, a.y, a.z, b.x, b.y, b.z], 6 * i);
    });
    geometry.attributes.position.needsUpdate = true;
    geometry.computeBoundingBox();
    geometry.computeBoundingSphere();
  };
  lines.refresh();
  return lines;
}

function frameCount(clip) {
  let n = 0;
  for (const track of clip.tracks) n = Math.max(n, track.times.length);
  return n;
}

export async function loadGltf(entry) {
  const gltf = await new GLTFLoader().loadAsync(entry.url);
  const item = mixerItem(gltf.scene, gltf.animations);
  let skinned = 0, morphs = 0;
  gltf.scene.traverse((o) => {
    if (o.isSkinnedMesh) skinned++;
    if (o.morphTargetInfluences) morphs += o.morphTargetInfluences.length;
    if (o.isMesh) o.frustumCulled = false;  // skinned and morphed bounds move
  });
  let meshes = 0;
  gltf.scene.traverse((o) => { if (o.isMesh) meshes++; });
  const group = new THREE.Group();
  group.add(gltf.scene);
  const bones = meshes ? null : nodeLines(gltf.scene, 0x66ccff);
  if (bones) group.add(bones);
  return Object.assign(item, {
    object: group,
    update(t) {
      item.pose(t);
      if (bones) bones.refresh();
    },
    info: () => bones ? 'a skeleton (no meshes)' : `${skinned} skinned meshes, ${morphs} morph targets`,
    state: () => ({ skinnedMeshes: skinned, morphTargets: morphs, meshes }),
  });
}

export async function loadVrm(entry) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  const gltf = await loader.loadAsync(entry.url);
  const vrm = gltf.userData.vrm;
  if (!vrm) throw new Error(`${entry.name}: three-vrm found no VRM in it`);
  VRMUtils.rotateVRM0(vrm);
  // kinema's animations key the file's own nodes: the humanoid must not overwrite them with its
  // normalized rig each frame; spring bones then move on the animated pose.
  if (vrm.humanoid) vrm.humanoid.autoUpdateHumanBones = false;
  vrm.scene.traverse((o) => { if (o.isMesh) o.frustumCulled = false; });
  const item = mixerItem(vrm.scene, gltf.animations);
  const springs = vrm.springBoneManager ? vrm.springBoneManager.joints.size : 0;
  // How far the springs bend their bones from the rest pose (degrees, the largest): what shows
  // that they are simulated.
  const springBones = vrm.springBoneManager ? [...vrm.springBoneManager.joints].map((j) => j.bone) : [];
  const rest = springBones.map((b) => b.quaternion.clone());
  const springBend = () => Math.max(0, ...springBones.map((b, i) =>
    THREE.MathUtils.radToDeg(b.quaternion.angleTo(rest[i]))));
  let previous = -1;
  return Object.assign(item, {
    object: vrm.scene,
    update(t, dt) {
      item.pose(t);
      // A jump (loop, scrub) restarts the springs at rest on the new pose instead of whipping
      // them from where the character was: rest rotations, tails taken from there.
      const jump = t < previous || (dt === 0 && t !== previous);
      previous = t;
      if (jump && vrm.springBoneManager) {
        springBones.forEach((b, i) => b.quaternion.copy(rest[i]));
        vrm.scene.updateMatrixWorld(true);
        vrm.springBoneManager.setInitState();
      }
      vrm.update(Math.min(dt, 1 / 20));
    },
    info: () => `VRM ${vrm.meta?.metaVersion ?? ''}, ${springs} spring-bone joints`,
    state: () => ({ vrmVersion: vrm.meta?.metaVersion ?? null, springJoints: springs,
      springBendDegrees: springBend() }),
  });
}

export async function loadBvh(entry) {
  const text = await (await fetch(entry.url)).text();
  const result = new BVHLoader().parse(text);
  const root = result.skeleton.bones[0];
  const scaled = new THREE.Group();
  scaled.add(root);
  // BVH in centimetres (most mocap) would fill the screen a hundredfold: shown in metres.
  const box = new THREE.Box3();
  root.updateMatrixWorld(true);
  for (const b of result.skeleton.bones) box.expandByPoint(b.getWorldPosition(new THREE.Vector3()));
  const height = box.getSize(new THREE.Vector3()).length();
  if (height > 10) scaled.scale.setScalar(0.01);
  const bones = nodeLines(scaled, 0x66ccff);
  const group = new THREE.Group();
  group.add(scaled, bones);
  const item = mixerItem(root, [result.clip]);
  item.clips = [entry.name.replace(/\.bvh$/i, '')];
  return Object.assign(item, {
    object: group,
    update(t) {
      item.pose(t);
      bones.refresh();
    },
    info: () => `${result.skeleton.bones.length} joints`,
    state: () => ({ joints: result.skeleton.bones.length }),
  });
}

async function json(entry) {
  const r = await fetch(entry.url);
  if (!r.ok) throw new Error(`${entry.name}: ${r.status} ${await r.text()}`);
  return r.json();
}

function sampleAt(t, fps, frames) {
  return Math.max(0, Math.min(frames - 1, Math.round(t * fps)));
}

export async function loadPoints(entry) {
  const d = await json(entry);
  const geometry = new THREE.BufferGeometry();
  const shown = new Float32Array(d.points * 3);
  geometry.setAttribute('position', new THREE.BufferAttribute(shown, 3));
  const colour = new THREE.Color(...d.colour);
  let object;
  if (d.segments) {
    geometry.setIndex(d.segments);
    object = new THREE.LineSegments(geometry, line(colour));
  } else {
    object = new THREE.Points(geometry, new THREE.PointsMaterial({ color: colour, size: 0.03 }));
  }
  object.frustumCulled = false;
  let sample = -1, alive = 0;
  const item = {
    object, clips: [], clip: -1, frames: d.samples,
    duration: d.samples > 1 ? (d.samples - 1) / d.fps : 0,
    setClip() {},
    update(t) {
      const s = sampleAt(t, d.fps, d.samples);
      if (s === sample) return;
      sample = s;
      // Living points first, drawn as a range: dead ones are not drawn at all.
      let n = 0;
      for (let p = 0; p < d.points; p++) {
        if (d.alive && !d.segments && (s < d.alive[2 * p] || s > d.alive[2 * p + 1])) continue;
        const k = 3 * (s * d.points + p);
        shown.set([d.positions[k], d.positions[k + 1], d.positions[k + 2]], 3 * n++);
      }
      alive = n;
      if (!d.segments) geometry.setDrawRange(0, n);
      geometry.attributes.position.needsUpdate = true;
    },
    info: () => `${d.points} points${d.segments ? `, ${d.segments.length / 2} strand segments` : ''}, ` +
      `sample ${sample + 1}/${d.samples}, ${alive} alive`,
    state: () => ({ points: d.points, samples: d.samples, alive, strands: !!d.segments }),
  };
  return item;
}

function groundMesh(grid) {
  const { nx, nz, lo, hi, heights } = grid;
  const positions = [], index = [];
  for (let iz = 0; iz < nz; iz++)
    for (let ix = 0; ix < nx; ix++)
      positions.push(lo[0] + (hi[0] - lo[0]) * ix / (nx - 1), heights[iz * nx + ix] ?? lo[1],
        lo[2] + (hi[2] - lo[2]) * iz / (nz - 1));
  for (let iz = 0; iz + 1 < nz; iz++)
    for (let ix = 0; ix + 1 < nx; ix++) {
      const a = iz * nx + ix, b = a + 1, c = a + nx, e = c + 1;
      if ([a, b, c, e].some((k) => heights[k] === null)) continue;  // nothing there
      index.push(a, c, b, b, c, e);
    }
  // Coloured by height (dark low, light high), so that steps and slopes read from any angle.
  const colours = [];
  const low = new THREE.Color(0x4a5a48), high = new THREE.Color(0xd8dcc0), c = new THREE.Color();
  const span = Math.max(hi[1] - lo[1], 1e-6);
  for (let k = 1; k < positions.length; k += 3) {
    c.copy(low).lerp(high, (positions[k] - lo[1]) / span);
    colours.push(c.r, c.g, c.b);
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  geometry.setAttribute('color', new THREE.Float32BufferAttribute(colours, 3));
  geometry.setIndex(index);
  geometry.computeVertexNormals();
  return new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({
    vertexColors: true, roughness: 0.9, side: THREE.DoubleSide }));
}

export async function loadGround(entry) {
  const d = await json(entry);
  const group = new THREE.Group();
  group.add(groundMesh(d.grid));
  const g = d.goals && d.goals.ankles ? d.goals : null;
  const legs = g ? g.legs.length : 0;
  const markers = [], stems = [];
  const colours = [0xff5555, 0x55aaff];
  for (let l = 0; l < legs; l++) {
    const m = new THREE.Mesh(new THREE.SphereGeometry(0.06, 16, 8),
      new THREE.MeshBasicMaterial({ color: colours[l % 2] }));
    const stem = new THREE.Line(new THREE.BufferGeometry().setFromPoints(
      [new THREE.Vector3(), new THREE.Vector3()]), line(colours[l % 2]));
    group.add(m, stem);
    markers.push(m);
    stems.push(stem);
  }
  // Every planted frame's goal as a dot on the ground: the footprints foot placement pins to.
  if (g) {
    const prints = [];
    for (let f = 0; f < g.frames; f++)
      for (let l = 0; l < legs; l++) {
        const k = f * legs + l;
        if (g.planted[k]) prints.push(g.ankles[3 * k], g.ground_y[k] + 0.005, g.ankles[3 * k + 2]);
      }
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.Float32BufferAttribute(prints, 3));
    group.add(new THREE.Points(geometry, new THREE.PointsMaterial({ color: 0xffee55, size: 0.05 })));
  }
  let frame = 0, planted = 0;
  return {
    object: group, clips: [], clip: -1, setClip() {},
    frames: g ? g.frames : 1,
    duration: g && g.frames > 1 ? (g.frames - 1) / g.fps : 0,
    update(t) {
      if (!g) return;
      frame = sampleAt(t, g.fps, g.frames);
      planted = 0;
      for (let l = 0; l < legs; l++) {
        const k = frame * legs + l;
        const a = new THREE.Vector3(g.ankles[3 * k], g.ankles[3 * k + 1], g.ankles[3 * k + 2]);
        const on = g.planted[k] === 1;
        planted += on;
        // Planted: the goal is the ground under the ankle, raised by the ankle's height.
        const goal = new THREE.Vector3(a.x, (g.ground_y[k] ?? a.y) + g.ankle_heights[l], a.z);
        markers[l].position.copy(on ? goal : a);
        markers[l].scale.setScalar(on ? 1.4 : 0.8);
        stems[l].geometry.setFromPoints([a, new THREE.Vector3(a.x, g.ground_y[k] ?? a.y, a.z)]);
      }
    },
    info: () => `${d.description}` + (g ? `; goals of ${g.file.split('/').pop()}: frame ${frame + 1}/${g.frames}, ${planted} planted` :
      d.goals ? `; no goals: ${d.goals.note}` : ''),
    state: () => ({ description: d.description, goalFrames: g ? g.frames : 0, legs, planted }),
  };
}

export async function loadMatch(entry) {
  const d = await json(entry);
  const joints = d.joints.length;
  const group = new THREE.Group();
  // The skeleton: a segment per joint with a parent.
  const bonePairs = [];
  d.joints.forEach((j, i) => { if (j.parent >= 0) bonePairs.push(j.parent, i); });
  const skeletonGeometry = new THREE.BufferGeometry();
  const jointPositions = new Float32Array(joints * 3);
  skeletonGeometry.setAttribute('position', new THREE.BufferAttribute(jointPositions, 3));
  skeletonGeometry.setIndex(bonePairs);
  const skeleton = new THREE.LineSegments(skeletonGeometry, line(0xffffff));
  skeleton.frustumCulled = false;
  const path = (flat, colour) => {
    const pts = [];
    for (let k = 0; k < flat.length; k += 3) pts.push(new THREE.Vector3(flat[k], 0.01, flat[k + 2]));
    return new THREE.Line(new THREE.BufferGeometry().setFromPoints(pts), line(colour));
  };
  group.add(skeleton, path(d.root, 0x55ff88), path(d.simulation, 0xff8855));
  // Transitions: where the search chose a new frame.
  for (const f of d.transitions) {
    const m = new THREE.Mesh(new THREE.SphereGeometry(0.03, 8, 6),
      new THREE.MeshBasicMaterial({ color: 0xffee55 }));
    m.position.set(d.root[3 * f], 0.01, d.root[3 * f + 2]);
    group.add(m);
  }
  // The trajectory the search asked for at this frame (predicted positions).
  const futureCount = d.trajectory_times.length;
  const future = new THREE.Points(new THREE.BufferGeometry(),
    new THREE.PointsMaterial({ color: 0xff55ff, size: 0.06 }));
  future.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(futureCount * 3), 3));
  future.frustumCulled = false;
  group.add(future);
  let frame = 0;
  return {
    object: group, clips: [], clip: -1, setClip() {},
    frames: d.frames,
    duration: d.frames > 1 ? (d.frames - 1) / d.fps : 0,
    update(t) {
      frame = sampleAt(t, d.fps, d.frames);
      jointPositions.set(d.positions.slice(frame * joints * 3, (frame + 1) * joints * 3));
      skeletonGeometry.attributes.position.needsUpdate = true;
      const p = d.predicted[frame];
      const attr = future.geometry.attributes.position;
      for (let k = 0; k < futureCount; k++)
        attr.setXYZ(k, p[3 * k] ?? 0, 0.02, p[3 * k + 2] ?? 0);
      attr.needsUpdate = true;
    },
    info: () => `frame ${frame + 1}/${d.frames}: database frame ${d.chosen_frame[frame]} ` +
      `(${d.clips[d.chosen_clip[frame]]} at ${d.source_time[frame].toFixed(2)} s); ` +
      `${d.searches} searches, ${d.transitions.length} transitions`,
    state: () => ({
      joints, searches: d.searches, transitions: d.transitions.length,
      chosenFrame: d.chosen_frame[frame], chosenClip: d.clips[d.chosen_clip[frame]],
    }),
  };
}

export const loaders = {
  gltf: loadGltf, vrm: loadVrm, bvh: loadBvh, points: loadPoints, ground: loadGround,
  match: loadMatch,
};
