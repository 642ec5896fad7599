// Building state machines (see graph_builder_internal.h and docs/graph.md): states and their
// nodes, the initial state, transitions in priority order and their conditions. Each machine is
// checked for cycles of instant transitions (graph_instant_cycles.cpp) once it is built.
#include <algorithm>

#include "graph_builder_internal.h"

namespace kinema {

// ---- state machines ------------------------------------------------------------------------

StateMachineNode GraphBuilder::parse_machine(const Json& j) {
  check_members(j, {"type", "name", "initial", "states", "transitions"});
  StateMachineNode m;
  const Json states = require(j, "states");
  expect_array(states);
  if (states.v.empty()) fail(states.ptr, "a state machine needs at least one state");
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < states.v.size(); ++i) {
    const Json s = states.at(i);
    check_members(s, {"name", "node"});
    const Json name = require(s, "name");
    GraphState state;
    state.name = get_name(name);
    if (state.name == "*") fail(name.ptr, "'*' is reserved for \"any state\" transitions");
    if (const auto it = seen.find(state.name); it != seen.end())
      fail(name.ptr, "duplicate state '" + state.name + "' (first defined at " + it->second + ")");
    seen[state.name] = s.ptr;
    m.states.push_back(std::move(state));
  }
  // States' nodes are built after every name is known (their order in nodes() is file order).
  for (size_t i = 0; i < states.v.size(); ++i)
    m.states[i].node = build_ref(require(states.at(i), "node"));
  if (j.has("initial")) {
    const Json init = j.at("initial");
    const std::string name = get_name(init);
    const auto it = std::find_if(m.states.begin(), m.states.end(),
                                 [&](const GraphState& s) { return s.name == name; });
    if (it == m.states.end())
      fail(init.ptr, "unknown state '" + name + "' (states: " + names_of(seen) + ")");
    m.initial = static_cast<int>(it - m.states.begin());
  }
  if (j.has("transitions")) {
    const Json transitions = j.at("transitions");
    expect_array(transitions);
    for (size_t i = 0; i < transitions.v.size(); ++i) {
      m.transitions.push_back(parse_transition(transitions.at(i), m));
      if (m.transitions.back().blend == TransitionBlend::Inertialize) m.has_inertialization = true;
    }
  }
  m.order.resize(m.transitions.size());
  for (size_t i = 0; i < m.order.size(); ++i) m.order[i] = static_cast<int>(i);
  std::stable_sort(m.order.begin(), m.order.end(), [&](int a, int b) {
    return m.transitions[static_cast<size_t>(a)].priority >
           m.transitions[static_cast<size_t>(b)].priority;
  });
  check_instant_cycles(m);
  return m;
}

GraphTransition GraphBuilder::parse_transition(const Json& j, const StateMachineNode& m) const {
  check_members(j, {"from", "to", "conditions", "blend", "duration", "priority", "exit_time"});
  GraphTransition t;
  t.pointer = j.ptr;
  const auto state_ref = [&](const Json& s, bool any_ok) {
    const std::string name = get_name(s);
    if (any_ok && name == "*") return kAnyState;
    for (size_t i = 0; i < m.states.size(); ++i)
      if (m.states[i].name == name) return static_cast<int>(i);
    std::string list;
    for (const GraphState& st : m.states) list += (list.empty() ? "" : ", ") + st.name;
    fail(s.ptr, "unknown state '" + name + "' (states: " + list +
                    (any_ok ? "; \"*\" for any state)" : ")"));
  };
  t.from = state_ref(require(j, "from"), true);
  t.to = state_ref(require(j, "to"), false);
  if (j.has("blend")) {
    const Json b = j.at("blend");
    const std::string s = get_string(b);
    if (s == "crossfade")
      t.blend = TransitionBlend::Crossfade;
    else if (s == "inertialize")
      t.blend = TransitionBlend::Inertialize;
    else
      fail(b.ptr, "unknown blend '" + s + "' (expected crossfade or inertialize)");
  }
  if (j.has("duration")) {
    const Json d = j.at("duration");
    t.duration = get_float(d);
    if (t.duration < 0) fail(d.ptr, "a duration must not be negative");
  }
  if (j.has("priority")) t.priority = get_int(j.at("priority"));
  if (j.has("exit_time")) {
    const Json e = j.at("exit_time");
    t.exit_time = get_float(e);
    if (t.exit_time < 0) fail(e.ptr, "exit_time must not be negative");
  }
  if (j.has("conditions")) {
    const Json cs = j.at("conditions");
    expect_array(cs);
    for (size_t i = 0; i < cs.v.size(); ++i) t.conditions.push_back(parse_condition(cs.at(i)));
  }
  return t;
}

GraphCondition GraphBuilder::parse_condition(const Json& j) const {
  check_members(j, {"parameter", "op", "value"});
  GraphCondition c;
  c.parameter = parameter_ref(require(j, "parameter"));
  const ParamType type = g_.parameters_[static_cast<size_t>(c.parameter)].type;
  std::string op;
  if (j.has("op")) op = get_string(j.at("op"));
  switch (type) {
    case ParamType::Trigger:
      if (j.has("op") || j.has("value"))
        fail((j.has("op") ? j.at("op") : j.at("value")).ptr,
             "a trigger is tested by name alone ({\"parameter\": NAME})");
      c.op = CompareOp::Triggered;
      return c;
    case ParamType::Bool: {
      bool value = true;
      if (j.has("value")) value = get_bool(j.at("value"));
      if (op.empty() || op == "==")
        c.op = CompareOp::Equal;
      else if (op == "!=")
        c.op = CompareOp::NotEqual;
      else
        fail(j.at("op").ptr, "a bool is compared with == or != only");
      c.value = value ? 1.0f : 0.0f;
      return c;
    }
    case ParamType::Float:
      break;
  }
  const Json op_json = require(j, "op");
  if (op == ">")
    c.op = CompareOp::Greater;
  else if (op == "<")
    c.op = CompareOp::Less;
  else if (op == ">=")
    c.op = CompareOp::GreaterEqual;
  else if (op == "<=")
    c.op = CompareOp::LessEqual;
  else if (op == "==")
    c.op = CompareOp::Equal;
  else if (op == "!=")
    c.op = CompareOp::NotEqual;
  else
    fail(op_json.ptr, "unknown comparison '" + op + "' (expected >, <, >=, <=, == or !=)");
  c.value = get_float(require(j, "value"));
  return c;
}

}  // namespace kinema
