// State machines at run time: choosing transitions, crossfades and inertialization (Bollo, GDC
// 2018). See the semantics in kinema/graph/graph_instance.h.
//
// What is on screen is the machine's "configuration": the current state alone, a crossfade
// from a live state (or a frozen snapshot of the previous screen pose) to the current state, or
// the current state plus a decaying inertialization offset. A transition that fires while
// another runs starts from the pose on screen (evaluated into the snapshot buffer at the switch),
// so interrupted transitions stay continuous.
#include <algorithm>
#include <cstring>

#include "graph_instance_internal.h"

namespace kinema {

namespace {

bool holds(const GraphCondition& c, float v) {
  switch (c.op) {
    case CompareOp::Greater:
      return v > c.value;
    case CompareOp::Less:
      return v < c.value;
    case CompareOp::GreaterEqual:
      return v >= c.value;
    case CompareOp::LessEqual:
      return v <= c.value;
    case CompareOp::Equal:
      return v == c.value;
    case CompareOp::NotEqual:
      return v != c.value;
    case CompareOp::Triggered:
      return v != 0;
  }
  return false;
}

void copy_pose(std::span<const SoaTransform> from, std::span<SoaTransform> to) {
  if (from.data() != to.data()) std::memmove(to.data(), from.data(), from.size_bytes());
}

}  // namespace

void GraphEvaluator::restart_machine(GraphInstance& g, int node) {
  GraphInstance::NodeState& st = state(g, node);
  GraphInstance::Machine& m = g.machine_state_[static_cast<size_t>(st.machine)];
  const StateMachineNode& sm = std::get<StateMachineNode>(def(g, node).data);
  MachineStatus& status = g.status_[static_cast<size_t>(st.machine)];
  m.current = sm.initial;
  m.fading = false;
  m.source = -1;
  m.inert_on = false;
  m.pending = false;
  m.have_history = false;
  status.state = sm.initial;
  status.previous_state = -1;
  status.state_time = 0;
  status.blending = false;
  st.normalized = 0;
  restart(g, sm.states[static_cast<size_t>(sm.initial)].node);
}

RootDelta GraphEvaluator::advance_machine(GraphInstance& g, int node, float dt) {
  GraphInstance::NodeState& st = state(g, node);
  GraphInstance::Machine& m = g.machine_state_[static_cast<size_t>(st.machine)];
  const StateMachineNode& sm = std::get<StateMachineNode>(def(g, node).data);
  MachineStatus& status = g.status_[static_cast<size_t>(st.machine)];
  status.active = true;

  // 1. The transition to take, if any: priority order, conditions, exit time.
  int fired = -1;
  const double played = state(g, sm.states[static_cast<size_t>(m.current)].node).normalized;
  for (const int index : sm.order) {
    const GraphTransition& t = sm.transitions[static_cast<size_t>(index)];
    if (t.from == kAnyState ? t.to == m.current : t.from != m.current) continue;
    if (t.exit_time >= 0 && played < t.exit_time) continue;
    bool ok = true;
    for (const GraphCondition& c : t.conditions)
      if (!holds(c, g.params_[static_cast<size_t>(c.parameter)])) {
        ok = false;
        break;
      }
    if (ok) {
      fired = index;
      break;
    }
  }

  // 2. What is on screen plays dt.
  if (m.fading) m.ramp.advance(dt);
  if (m.inert_on) {
    m.inert.advance(dt);
    if (!m.inert.active()) m.inert_on = false;
  }
  RootDelta motion = advance(g, sm.states[static_cast<size_t>(m.current)].node, dt);
  if (m.fading && m.source >= 0) {
    const RootDelta from = advance(g, sm.states[static_cast<size_t>(m.source)].node, dt);
    motion = mix(from, motion, m.ramp.weight());
  }
  if (m.fading && m.ramp.done()) {
    m.fading = false;
    m.source = -1;
  }
  status.state_time += dt;

  // 3. The switch.
  if (fired >= 0) start_transition(g, node, fired, dt);
  st.normalized = state(g, sm.states[static_cast<size_t>(m.current)].node).normalized;
  status.blending = m.fading || m.inert_on || m.pending;
  return motion;
}

void GraphEvaluator::start_transition(GraphInstance& g, int node, int index, float dt) {
  using R = GraphEvaluator;
  GraphInstance::NodeState& st = R::state(g, node);
  const StateMachineNode& sm = std::get<StateMachineNode>(R::def(g, node).data);
  const GraphTransition& t = sm.transitions[static_cast<size_t>(index)];
  auto& machines = R::machines(g);
  GraphInstance::Machine& m = machines[static_cast<size_t>(st.machine)];
  MachineStatus& status = R::status(g)[static_cast<size_t>(st.machine)];

  for (const GraphCondition& c : t.conditions)
    if (c.op == CompareOp::Triggered) R::params(g)[static_cast<size_t>(c.parameter)] = 0;

  const int from = m.current;
  const bool plain = !m.fading && !m.inert_on && !m.pending;
  const bool snapshot =
      t.duration > 0 && (t.blend == TransitionBlend::Inertialize || !plain || t.to == from);
  if (snapshot)  // the pose on screen now, under the old configuration
    copy_pose(R::evaluate_machine(g, node, false), R::buffer(g, m.snapshot));

  m.current = t.to;
  const int target = sm.states[static_cast<size_t>(t.to)].node;
  R::restart(g, target);
  status.previous_state = from;
  status.state = t.to;
  status.last_transition = index;
  ++status.transitions_taken;
  status.state_time = 0;

  m.fading = false;
  m.source = -1;
  m.inert_on = false;
  m.pending = false;
  if (!(t.duration > 0)) return;  // a cut
  if (t.blend == TransitionBlend::Crossfade) {
    m.source = snapshot ? kSnapshot : from;
    m.fading = true;
    m.ramp.start(t.duration, FadeCurve::Smoothstep);
    return;
  }
  // Inertialization: the new state's pose before and after its first step gives its velocity.
  copy_pose(R::evaluate(g, target, false), R::buffer(g, m.new_previous));
  R::advance(g, target, dt);  // its root motion is not used: the old state moved this update
  m.pending = true;
  m.pending_dt = dt;
  m.pending_duration = t.duration;
}

std::span<const SoaTransform> GraphEvaluator::evaluate_machine(GraphInstance& g, int node,
                                                               bool record) {
  GraphInstance::NodeState& st = state(g, node);
  GraphInstance::Machine& m = g.machine_state_[static_cast<size_t>(st.machine)];
  const StateMachineNode& sm = std::get<StateMachineNode>(def(g, node).data);
  const std::span<SoaTransform> out = buffer(g, st.pose);
  const int joints = g.graph_->joint_count();
  const int current = sm.states[static_cast<size_t>(m.current)].node;

  if (m.pending) {
    // At the switch the inertializer shows the old pose; outside the frame's real evaluation
    // that is the snapshot, and nothing changes.
    if (!record) return buffer(g, m.snapshot);
    const std::span<const SoaTransform> now = evaluate(g, current, record);
    const std::span<const SoaTransform> old_now = buffer(g, m.snapshot);
    const std::span<const SoaTransform> old_prev = m.have_history ? buffer(g, m.history) : old_now;
    bool ok = m.pending_dt > 0 && m.inert.transition(old_prev, old_now, buffer(g, m.new_previous),
                                                     now, m.pending_dt, m.pending_duration);
    if (!ok)  // no time step to measure velocities with: match the pose only
      ok = m.inert.transition(old_now, old_now, now, now, 1.0f, m.pending_duration);
    m.pending = false;
    m.inert_on = ok;
    if (!ok || !m.inert.apply(now, out)) copy_pose(now, out);
  } else if (m.fading) {
    const std::span<const SoaTransform> from =
        m.source >= 0 ? evaluate(g, sm.states[static_cast<size_t>(m.source)].node, record)
                      : std::span<const SoaTransform>(buffer(g, m.snapshot));
    const std::span<const SoaTransform> to = evaluate(g, current, record);
    if (!crossfade(from, to, m.ramp.weight(), joints, out)) copy_pose(to, out);
  } else if (m.inert_on) {
    const std::span<const SoaTransform> now = evaluate(g, current, record);
    if (!m.inert.apply(now, out)) copy_pose(now, out);
  } else {
    copy_pose(evaluate(g, current, record), out);
  }
  if (record && m.history >= 0) {
    copy_pose(out, buffer(g, m.history));
    m.have_history = true;
  }
  return out;
}

}  // namespace kinema
