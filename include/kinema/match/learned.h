// kinema/match/learned.h — learned motion matching at run time (Holden, Kanoun, Perepichka and
// Popa, "Learned Motion Matching", SIGGRAPH 2020).
//
// Three small networks do the database's job, so memory no longer grows with the data:
//   stepper       [x, z] → [Δx, Δz]   advances the features x and the latent z one frame;
//   projector     q → [x, z]          the search: the database frame nearest a query q;
//   decompressor  [x, z] → pose       the full pose of a frame from its features and latent.
// x are the database's normalized, weighted features (kinema/match/database.h: the same
// layout, normalization and query construction, so a LearnedModel answers the same queries as
// the Database it was trained on); z is a latent of `latent_dims` numbers per frame, learned with
// the decompressor (kinema/match/learn.h trains them).
//
// The networks are multilayer perceptrons evaluated by kinema's own kernels (no training library
// at run time): allocation-free, the same bits whatever the thread count, within 1e-5 of the
// training library's forward pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/match/database.h"
#include "kinema/math/transform.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::match {

enum class Activation : uint8_t {
  none = 0,  ///< identity (the output layer)
  relu = 1,  ///< max(0, v)
  elu = 2,   ///< v > 0 ? v : exp(v) − 1
};

/// One fully connected layer: out[o] = act(bias[o] + Σ_i in[i] · weights[i · outputs + o]).
/// The weights are stored input-major (a row per input) so that a matrix–vector product walks
/// them once, a SIMD register of outputs at a time.
struct DenseLayer {
  uint32_t inputs = 0, outputs = 0;
  Activation activation = Activation::none;
  std::vector<float> weights;  ///< inputs × outputs, input-major
  std::vector<float> bias;     ///< outputs
};

/// A multilayer perceptron with its input and output normalization:
///   in' = (in − input_mean) · input_scale,  out = net(in') · output_scale + output_mean.
struct Mlp {
  std::vector<float> input_mean, input_scale;    ///< inputs() each (scale = 1 / std. deviation)
  std::vector<DenseLayer> layers;                ///< each layer's inputs = the previous outputs
  std::vector<float> output_mean, output_scale;  ///< outputs() each

  uint32_t inputs() const { return layers.empty() ? 0 : layers.front().inputs; }
  uint32_t outputs() const { return layers.empty() ? 0 : layers.back().outputs; }
  /// Floats of scratch evaluate() needs: twice the widest layer (ping-pong buffers).
  size_t scratch_floats() const;
  /// Weights and biases and normalization numbers.
  size_t parameter_count() const;
  /// out = the network at `in`. Never allocates, never throws: `in` has inputs() numbers, `out`
  /// outputs(), `scratch` scratch_floats() (checked by assertions only). The same bits whatever
  /// the thread count; the instruction set (AVX2+FMA when the CPU has it) is chosen at run time.
  void evaluate(std::span<const float> in, std::span<float> out, std::span<float> scratch) const;
};

/// The pose vector a decompressor writes, per frame (`pose_vector_size(joints)` numbers):
///   per joint j (skeleton order):   local translation (3, metres), then the first two columns
///                                   of its local rotation matrix (6; the rotation is rebuilt by
///                                   Gram–Schmidt, Zhou et al.'s continuous 6D representation);
///                                   skeleton roots are relative to the frame's root frame
///                                   (RootSample: ground position, facing along +Z);
///   root step (3):                  the root frame's move from the previous frame, x and z
///                                   (metres, in the previous root frame) and turn (radians,
///                                   about +Y);
///   contacts (2):                   left, right foot: 1 in contact, 0 not (≥ 0.5 is contact).
inline constexpr size_t pose_vector_size(int joints) { return 9 * size_t(joints) + 5; }

/// One frame decoded from a pose vector.
struct RootStep {
  float x = 0, z = 0, turn = 0;
};
/// pose vector → local transforms (scale 1), root step, contacts. `local` has one per joint.
void decode_pose(std::span<const float> pose_vector, std::span<Transformf> local, RootStep& step,
                 bool contacts[2]);
/// The inverse (rotations as matrix columns); contacts as 0/1.
void encode_pose(std::span<const Transformf> local, const RootStep& step, const bool contacts[2],
                 std::span<float> pose_vector);

/// A trained model: the database's feature layout and skeleton, the three networks, and the
/// state the controller starts from.
struct LearnedModel {
  // The feature layout of the database it was trained on (see Database).
  double fps = 30;
  std::vector<double> trajectory_times;
  std::vector<FeatureGroup> groups;
  std::vector<float> mean;
  FeatureJoints joints;
  Skeleton skeleton;
  uint32_t latent_dims = 0;
  /// Frames of the database it was trained on (reported: the model's size does not grow with it).
  uint64_t trained_frames = 0;
  /// [x, z] of the database's first frame: where reset() starts.
  std::vector<float> start_state;
  Mlp decompressor;  ///< [x, z] (dims + latent_dims) → pose vector
  Mlp stepper;       ///< [x, z] → [Δx, Δz] over one frame (1 / fps seconds)
  Mlp projector;     ///< normalized query (dims) → [x, z]

  size_t dims() const { return mean.size(); }
  size_t state_size() const { return dims() + latent_dims; }
  /// Bytes of the networks' parameters and the layout (what replaces the database in memory).
  size_t model_bytes() const;
};

/// The file format (.kml): "KMLEARN\0", format version, byte count and a 64-bit FNV-1a checksum
/// of the payload, then the payload (little-endian). See docs/match.md.
inline constexpr uint32_t learned_format_version = 1;
std::string serialize_learned_model(const LearnedModel& model);
/// Throws kinema::Error naming `file` and the byte offset: wrong magic, another version, a
/// checksum mismatch, truncation, counts that do not fit the file or each other (a layer whose
/// inputs are not the previous layer's outputs, networks whose sizes do not fit the features,
/// latent and skeleton), an unknown activation, non-finite numbers.
LearnedModel deserialize_learned_model(std::string_view bytes, const std::string& file = "");

/// The run-time state of a learned model: the current features x and latent z, a candidate
/// state from the last projection, and the last decompressed pose vector. All buffers are sized
/// at construction; no method allocates. One per character; the model must outlive it.
class LearnedPlayer {
 public:
  explicit LearnedPlayer(const LearnedModel& model);

  /// Back to the model's start state.
  void reset();
  /// The current state: x (dims) and z (latent_dims).
  std::span<const float> features() const;
  std::span<const float> latent() const;
  std::span<const float> state() const { return state_; }
  void set_state(std::span<const float> state);
  /// Advances one frame: [x, z] += stepper([x, z]).
  void step();
  /// The projector at a normalized query: the candidate state (kept until the next call) and its
  /// cost ‖q − x̂‖², the squared distance the exact search would report for that frame. A query
  /// that is not dims() long costs +∞ and leaves the candidate as it was.
  float project(std::span<const float> query);
  std::span<const float> candidate() const { return candidate_; }
  /// Makes the candidate the current state.
  void jump_to_candidate();
  /// ‖q − x‖² of the current state's features (+∞ for a query that is not dims() long).
  float cost(std::span<const float> query) const;
  /// The decompressor at the current state (the returned span lives until the next call).
  std::span<const float> decompress();

 private:
  const LearnedModel* model_;
  std::vector<float> state_, candidate_, delta_, pose_, scratch_;
};

}  // namespace kinema::match

namespace kinema::match {

/// Foot contacts of every database frame (frames × 2: left, right; 1 = contact), detected per clip
/// variant on its own motion (detect_foot_contacts, kinema/blend/root_motion.h): the ankle within
/// `contact_height` metres of its lowest point and slower than `contact_speed` m/s. Needs poses.
std::vector<uint8_t> database_foot_contacts(const Database& db, double contact_height = 0.05,
                                            double contact_speed = 0.5);

/// Every frame's pose vector (frames × pose_vector_size(joints)), what a decompressor learns to
/// rebuild: the frame's local pose with the skeleton roots relative to its root frame, the root
/// step from the previous frame of its clip (from the next frame's, for a clip's first frame:
/// the step the controller plays), `contacts` as database_foot_contacts gives them. Needs poses.
std::vector<float> database_pose_vectors(const Database& db, std::span<const uint8_t> contacts);

}  // namespace kinema::match

namespace kinema::match {

/// How well a model stands in for a database (typically clips held back from its training, on
/// the same skeleton and feature layout).
struct LearnedEvaluation {
  size_t frames = 0;  ///< database frames measured (every searchable frame)
  /// Pose error: per frame, the projector's state from the frame's own features, decompressed,
  /// against the frame's pose; the mean distance of the joints (model space, relative to the
  /// root frame), centimetres. Percentiles over the frames.
  double pose_error_p50_cm = 0, pose_error_p90_cm = 0, pose_error_p99_cm = 0;
  /// Queries: each frame's features plus N(0, noise²) per feature (a running character's query).
  /// The share whose projection's nearest database frame is the exact search's answer, and the
  /// projection's cost ‖q − x̂‖² less the exact best cost (percentiles; normalized units).
  double projector_agreement = 0;
  double cost_excess_p50 = 0, cost_excess_p90 = 0;
  double exact_cost_p50 = 0;  ///< the exact search's best cost, for scale
};

/// Measures `model` on `db` (which needs poses on the model's skeleton, the model's feature
/// count, and searchable frames). Deterministic for a given seed. Throws kinema::Error when the
/// database does not fit the model.
LearnedEvaluation evaluate_learned_model(const LearnedModel& model, const Database& db,
                                         double noise = 0.1, uint64_t seed = 1);

}  // namespace kinema::match
