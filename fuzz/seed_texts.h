// fuzz/seed_texts.h — small hand-made inputs for the readers tests/data has no files for (the
// seed maker writes them into the seed folders; the graph target's clips come from kSmallBvh).
#pragma once

namespace kinema::fuzz {

/// A five-joint character with two frames (Hips, a spine and two legs).
inline constexpr const char* kSmallBvh = R"j(HIERARCHY
ROOT Hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 30 0
    }
  }
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0 -45 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT LeftFoot
      {
        OFFSET 0 -40 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 0 10
        }
      }
    }
  }
  JOINT RightUpLeg
  {
    OFFSET -10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT RightLeg
    {
      OFFSET 0 -45 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT RightFoot
      {
        OFFSET 0 -40 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 0 10
        }
      }
    }
  }
}
MOTION
Frames: 4
Frame Time: 0.0333333
0 90 0 0 0 0 0 5 0 10 0 0 -10 0 0 0 0 0 -10 0 0 10 0 0 0 0 0
0 90 2 0 0 0 0 5 0 15 0 0 -15 0 0 5 0 0 -15 0 0 15 0 0 -5 0 0
0 90 4 0 0 0 0 5 0 10 0 0 -10 0 0 0 0 0 -10 0 0 10 0 0 0 0 0
0 90 6 0 0 0 0 5 0 5 0 0 -5 0 0 -5 0 0 -5 0 0 5 0 0 5 0 0
)j";

inline constexpr const char* kGraphSeeds[] = {
    R"j({
  "version": 1,
  "parameters": [
    {"name": "speed", "type": "float", "default": 0},
    {"name": "grounded", "type": "bool", "default": true},
    {"name": "jump", "type": "trigger"}
  ],
  "clips": [
    {"name": "idle", "file": "anim.glb", "clip": "idle"},
    {"name": "walk", "file": "anim.glb", "clip": "walk"}
  ],
  "nodes": [
    {"name": "moving", "type": "clip", "clip": "walk", "rate": 1.0, "loop": true}
  ],
  "root": {
    "type": "state_machine",
    "states": [
      {"name": "idle", "node": "idle"},
      {"name": "walk", "node": "moving"}
    ],
    "transitions": [
      {"from": "idle", "to": "walk", "duration": 0.2,
       "conditions": [{"parameter": "speed", "op": ">", "value": 0.1}]},
      {"from": "walk", "to": "idle", "duration": 0.2,
       "conditions": [{"parameter": "speed", "op": "<=", "value": 0.1}]}
    ]
  }
})j",
    R"j({
  "version": 1,
  "parameters": [
    {"name": "speed", "type": "float"},
    {"name": "aim", "type": "float", "default": 0},
    {"name": "grounded", "type": "bool", "default": true},
    {"name": "jump", "type": "trigger"},
    {"name": "hit", "type": "trigger"}
  ],
  "clips": [
    {"name": "idle", "file": "clips/idle.glb"},
    {"name": "walk", "file": "clips/locomotion.glb", "clip": "walk"},
    {"name": "run", "file": "clips/locomotion.glb", "clip": "run", "sample_rate": 60},
    {"name": "aim", "file": "clips/aim.glb", "clip": "aim"},
    {"name": "jump", "file": "clips/jump.glb", "clip": "jump"},
    {"name": "flinch", "file": "clips/flinch.glb", "clip": "flinch"}
  ],
  "root_motion": {"joint": "Hips"},
  "compression": {"enabled": true},
  "nodes": [
    {"name": "move", "type": "blend1d", "parameter": "speed", "speed_correction": "weights",
     "samples": [
       {"clip": "walk", "position": 1.5, "markers": [{"id": "L", "time": 0.0}, {"id": "R", "time": 0.05}]},
       {"clip": "run", "position": 4.5, "markers": [{"id": "R", "time": 0.01}, {"id": "L", "time": 0.06}]}
     ]},
    {"name": "move_and_aim", "type": "layer", "base": "move",
     "layers": [{"node": "aim", "weight": "aim",
                 "mask": {"joint": "Spine", "ramp": [0.25, 0.5, 0.75]}}]},
    {"name": "hit_react", "type": "additive", "base": "move_and_aim", "additive": "flinch",
     "reference": {"clip": "flinch", "time": 0}, "weight": 1.0}
  ],
  "drivers": [{"parameter": "speed", "expression": "1.2 + aim * sin(_pi * t / 2)"}],
  "root": {
    "type": "state_machine",
    "initial": "ground",
    "states": [
      {"name": "ground", "node": "hit_react"},
      {"name": "airborne", "node": {"type": "clip", "clip": "jump", "loop": false}}
    ],
    "transitions": [
      {"from": "ground", "to": "airborne", "duration": 0.1, "conditions": [{"parameter": "jump"}]},
      {"from": "airborne", "to": "ground", "duration": 0.2,
       "conditions": [{"parameter": "grounded"}]}
    ]
  }
})j"};

inline constexpr const char* kStickPathSeeds[] = {
    R"j({"duration": 6, "keys": [
      {"time": 0, "direction": [0, 2], "speed": 1.5},
      {"time": 2, "direction": [3, 4]},
      {"time": 4, "direction": [1, 0], "speed": 3, "facing": [0, -1]}]})j",
    R"j({"duration": 1, "keys": [{"time": 0, "speed": 1, "direction": [0, 1]}]})j"};

inline constexpr const char* kTagSeeds[] = {
    R"j({"tags": [{"clip": "walk", "start": 0, "end": 1.5, "tag": "idle"},
                 {"clip": "run", "start": 2, "end": 2, "tag": "jump"},
                 {"clip": "walk", "start": 3, "end": 4, "tag": "turn"}]})j",
    R"j({"tags": []})j"};

inline constexpr const char* kSceneSeeds[] = {
    R"j({
  "duration": 0.5, "fps": 24, "rate": 60,
  "wind": [0, 0, 2],
  "colliders": [{"shape": "sphere", "centre": [0.5, 0.2, 0.3], "radius": 0.2}],
  "cloth": [{
    "name": "flag",
    "grid": {"columns": 8, "rows": 8, "width": 1, "height": 1, "corner": [0, 1, 0],
             "u": [1, 0, 0], "v": [0, -1, 0]},
    "material": {"stretch_stiffness": "inextensible", "bend_stiffness": 5},
    "pinned": [0, 7], "solver": "implicit", "preconditioner": "multigrid", "strain_limit": 0.005
  }]
})j",
    R"j({
    "colliders": [{"shape": "plane"}],
    "rigid_bodies": [
      {"name": "crate", "shape": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0.5, 0],
       "array": {"count": [3, 2, 1], "step": [1, 1, 0]}, "mass": 20},
      {"name": "pole", "shape": "capsule", "radius": 0.1, "half_height": 1, "static": true},
      {"name": "hull", "shape": "convex_hull", "points": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}],
    "joints": [{"type": "hinge", "a": "world", "b": "crate_5", "anchor": [2, 2, 0], "axis": [0, 0, 1],
                "limits_degrees": [-30, 30]}],
    "rigid_solver": {"substeps": 2, "iterations": 6}
})j",
    R"j({
  "duration": 0.3, "fps": 10, "rate": 60,
  "liquid": {"spacing": 0.02, "viscosity": 0.02,
             "tank": {"min": [0, 0, 0], "max": [0.4, 0.4, 0.12]},
             "blocks": [{"min": [0, 0, 0], "max": [0.16, 0.24, 0.12]}],
             "surface": true, "colour": [0.1, 0.3, 0.9]}
})j",
    R"j({"liquid": {"solver": "flip", "flip_ratio": 0.9, "domain": {"min": [0, 0, 0], "max": [1, 1, 1]},
      "blocks": [{"min": [0, 0, 0], "max": [0.1, 0.1, 0.1], "velocity": [1, 0, 0]}]}})j",
    R"j({"colliders": [
      {"shape": "sphere", "centre": [0, 0.6, 0], "radius": 0.1},
      {"shape": "plane", "point": [0, 0, 0], "normal": [1, 1, 0]}],
    "smoke": {"domain": {"min": [-0.4, 0, -0.4], "max": [0.4, 1.2, 0.4]}, "resolution": 24,
              "boundary": {"+x": "wall", "-y": "open"}, "advection": "semi_lagrangian",
              "fire": {"burn_rate": 3}, "buoyancy": {"density": 0, "heat": 4},
              "sources": [{"shape": "box", "centre": [0, 0.1, 0], "half_extents": [0.1, 0.05, 0.1],
                           "fuel": 1, "velocity": [0, 1, 0], "start": 0.1, "end": 0.4}]}})j",
    R"j({"duration": 3, "fps": 30, "rate": 60,
  "colliders": [{"shape": "plane", "point": [0, 0, 0], "normal": [0, 1, 0], "friction": 0.5}],
  "soft_bodies": [{"name": "jelly", "box": {"size": [0.2, 0.2, 0.2], "cells": [3, 3, 3],
                   "corner": [-0.1, 0.3, -0.1]},
                   "mass": 2, "edge_compliance": 0.01, "volume_compliance": 0,
                   "pin_region": {"min": [-1, 0.39, -1], "max": [1, 2, 1]}}]})j"};

inline constexpr const char* kObjSeeds[] = {
    "v -5 0 -5\nv 5 0 -5\nv 0 0 5\nf 1 3 2\n",
    "# a quad and a fan\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nvt 0 0\nvn 0 1 0\n"
    "f 1/1/1 2/1/1 3/1/1 4/1/1\nf -1 -2 -3\no part\ng group\nv 2 0.5 2\nf 1 2 5\n"};

}  // namespace kinema::fuzz
