// Training learned motion matching with libtorch: compressor + decompressor, then stepper, then
// projector (kinema/learn/train.h). Everything libtorch touches stays in this file; the result
// is a match::LearnedModel of plain arrays.
#include "kinema/learn/train.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "kinema/core/error.h"
#include "kinema/match/search.h"

namespace kinema::learn {

namespace {

using match::Activation;
using match::DenseLayer;
using match::Mlp;

/// Linear layers with `hidden_activation` between them: what match::Mlp evaluates.
struct NetImpl : torch::nn::Module {
  NetImpl(int64_t inputs, int64_t hidden, int64_t hidden_layers, int64_t outputs,
          Activation hidden_activation)
      : activation(hidden_activation) {
    int64_t width = inputs;
    for (int64_t i = 0; i <= hidden_layers; ++i) {
      const int64_t out = i == hidden_layers ? outputs : hidden;
      linears.push_back(
          register_module("linear" + std::to_string(i), torch::nn::Linear(width, out)));
      width = out;
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    for (size_t i = 0; i < linears.size(); ++i) {
      x = linears[i]->forward(x);
      if (i + 1 < linears.size())
        x = activation == Activation::elu ? torch::elu(x) : torch::relu(x);
    }
    return x;
  }
  std::vector<torch::nn::Linear> linears;
  Activation activation;
};
TORCH_MODULE(Net);

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous().reshape({-1});
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

/// The trained network as a match::Mlp: input-major weights, normalization folded around it.
Mlp export_mlp(Net& net, const torch::Tensor& input_mean, const torch::Tensor& input_std,
               const torch::Tensor& output_mean, const torch::Tensor& output_std) {
  Mlp mlp;
  mlp.input_mean = to_vector(input_mean);
  mlp.input_scale = to_vector(1.0 / input_std);
  mlp.output_mean = to_vector(output_mean);
  mlp.output_scale = to_vector(output_std);
  for (size_t i = 0; i < net->linears.size(); ++i) {
    const torch::nn::Linear& l = net->linears[i];
    DenseLayer layer;
    layer.outputs = uint32_t(l->weight.size(0));
    layer.inputs = uint32_t(l->weight.size(1));
    layer.activation = i + 1 < net->linears.size() ? net->activation : Activation::none;
    layer.weights = to_vector(l->weight.t());
    layer.bias = to_vector(l->bias);
    mlp.layers.push_back(std::move(layer));
  }
  return mlp;
}

torch::Tensor from_floats(const float* data, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<float*>(data), {rows, cols}, torch::kFloat32).clone();
}

/// Per-column mean and standard deviation, the deviation at least `floor`.
std::pair<torch::Tensor, torch::Tensor> column_stats(const torch::Tensor& m, double floor) {
  return {m.mean(0), m.std(0, /*unbiased=*/false).clamp_min(floor)};
}

/// AdamW with the learning rate decayed geometrically to a tenth over `iterations`.
void set_learning_rate(torch::optim::AdamW& opt, double base, uint32_t it, uint32_t iterations) {
  const double lr = base * std::pow(0.1, double(it) / double(std::max<uint32_t>(iterations, 1)));
  for (auto& group : opt.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

/// Model-space joint positions (B × J × 3, metres, in the frame's root frame) and rotation
/// matrices (B × J × 3 × 3) of a batch of pose vectors (B × P), by forward kinematics.
std::pair<torch::Tensor, torch::Tensor> forward_kinematics(const torch::Tensor& pose,
                                                           std::span<const int> parents) {
  const int64_t J = int64_t(parents.size()), B = pose.size(0);
  const torch::Tensor joints = pose.narrow(1, 0, 9 * J).reshape({B, J, 9});
  const torch::Tensor translation = joints.narrow(2, 0, 3);
  const torch::Tensor c0 = joints.narrow(2, 3, 3), c1 = joints.narrow(2, 6, 3);
  const torch::Tensor a = torch::nn::functional::normalize(
      c0, torch::nn::functional::NormalizeFuncOptions().dim(2).eps(1e-6));
  const torch::Tensor b = torch::nn::functional::normalize(
      c1 - (a * c1).sum(2, true) * a,
      torch::nn::functional::NormalizeFuncOptions().dim(2).eps(1e-6));
  const torch::Tensor c = torch::cross(a, b, 2);
  const torch::Tensor local = torch::stack({a, b, c}, 3);  // columns
  std::vector<torch::Tensor> positions(static_cast<size_t>(J)), rotations(static_cast<size_t>(J));
  for (int64_t j = 0; j < J; ++j) {
    const torch::Tensor r = local.select(1, j), t = translation.select(1, j);
    const int p = parents[size_t(j)];
    if (p < 0) {
      rotations[size_t(j)] = r;
      positions[size_t(j)] = t;
    } else {
      rotations[size_t(j)] = torch::matmul(rotations[size_t(p)], r);
      positions[size_t(j)] =
          torch::matmul(rotations[size_t(p)], t.unsqueeze(2)).squeeze(2) + positions[size_t(p)];
    }
  }
  return {torch::stack(positions, 1), torch::stack(rotations, 1)};
}

class Trainer {
 public:
  Trainer(const match::Database& db, const TrainOptions& options, TrainReport* report,
          const TrainProgress& progress)
      : db_(db), o_(options), report_(report), progress_(progress), rng_(options.seed) {
    frames_ = int64_t(db.frames());
    dims_ = int64_t(db.dims());
    latent_ = int64_t(options.latent_dims);
    const std::vector<uint8_t> contacts =
        match::database_foot_contacts(db, options.contact_height, options.contact_speed);
    const std::vector<float> poses = match::database_pose_vectors(db, contacts);
    pose_size_ = int64_t(match::pose_vector_size(db.skeleton.joint_count()));
    x_ = from_floats(db.features.values.data(), frames_, dims_);
    y_ = from_floats(poses.data(), frames_, pose_size_);
    std::tie(x_mean_, x_std_) = column_stats(x_, 1e-3);
    std::tie(y_mean_, y_std_) = column_stats(y_, 1e-2);
    // Pairs (f, f + 1) and windows within one clip variant.
    for (const match::DatabaseClip& c : db.clips)
      for (uint32_t f = c.first_frame; f + 1 < c.first_frame + c.frame_count; ++f)
        pair_starts_.push_back(int64_t(f));
    if (pair_starts_.empty())
      throw Error("", "database", "learning needs clips of at least two frames");
    uint32_t longest = 0;
    for (const match::DatabaseClip& c : db.clips) longest = std::max(longest, c.frame_count);
    window_ = int64_t(std::min(options.stepper_window, longest));
    for (const match::DatabaseClip& c : db.clips)
      for (uint32_t f = c.first_frame; f + window_ <= c.first_frame + c.frame_count; ++f)
        window_starts_.push_back(int64_t(f));
    for (uint32_t f = 0; f < db.frames(); ++f)
      if (db.features.searchable.empty() || db.features.searchable[f]) searchable_.push_back(f);
    if (searchable_.empty()) throw Error("", "database", "no searchable frame to learn from");
  }

  uint32_t iterations() const {
    const double n = std::ceil(o_.epochs * double(frames_) / double(o_.batch));
    return std::max<uint32_t>(o_.min_iterations, uint32_t(std::min(n, 1e9)));
  }

  torch::Tensor sample(const std::vector<int64_t>& from, uint32_t count) {
    std::uniform_int_distribution<size_t> pick(0, from.size() - 1);
    std::vector<int64_t> idx(count);
    for (int64_t& i : idx) i = from[pick(rng_)];
    return torch::tensor(idx, torch::kInt64);
  }

  void record(int network, LossCurve& curve, double& sum, uint32_t it, uint32_t total) {
    if ((it + 1) % curve.every == 0 || it + 1 == total) {
      const uint32_t n = (it + 1) % curve.every == 0 ? curve.every : (it + 1) % curve.every;
      curve.losses.push_back(sum / n);
      sum = 0;
      if (progress_) progress_(network, it + 1, total);
    }
  }

  /// Stage 1: compressor and decompressor together; fills z_ for every frame.
  Mlp train_decompressor() {
    const auto start = std::chrono::steady_clock::now();
    const std::span<const int> parents = db_.skeleton.parents();
    Net compressor(pose_size_, o_.hidden, 3, latent_, Activation::elu);
    Net decompressor(dims_ + latent_, o_.hidden, o_.decompressor_layers, pose_size_,
                     Activation::relu);
    std::vector<torch::Tensor> params = compressor->parameters();
    for (const torch::Tensor& p : decompressor->parameters()) params.push_back(p);
    torch::optim::AdamW opt(params,
                            torch::optim::AdamWOptions(o_.learning_rate).weight_decay(1e-3));
    const uint32_t total = iterations();
    LossCurve curve{"decompressor", std::max<uint32_t>(1, total / 200), {}};
    double sum = 0;
    const double fps = db_.fps;
    for (uint32_t it = 0; it < total; ++it) {
      set_learning_rate(opt, o_.learning_rate, it, total);
      const torch::Tensor i0 = sample(pair_starts_, o_.batch);
      const torch::Tensor idx = torch::cat({i0, i0 + 1});
      const torch::Tensor yn = (y_.index_select(0, idx) - y_mean_) / y_std_;
      const torch::Tensor xn = (x_.index_select(0, idx) - x_mean_) / x_std_;
      const torch::Tensor z = compressor->forward(yn);
      const torch::Tensor yn_hat = decompressor->forward(torch::cat({xn, z}, 1));
      const torch::Tensor y_hat = yn_hat * y_std_ + y_mean_;
      const auto [pos_hat, rot_hat] = forward_kinematics(y_hat, parents);
      const auto [pos, rot] = forward_kinematics(y_.index_select(0, idx), parents);
      const int64_t B = i0.size(0);
      const auto velocity = [B](const torch::Tensor& t) {
        return t.narrow(0, B, B) - t.narrow(0, 0, B);
      };
      torch::Tensor loss = (yn_hat - yn).abs().mean() +                      // pose vector
                           10.0 * (pos_hat - pos).abs().mean() +             // metres → 10 cm
                           (rot_hat - rot).abs().mean() +                    // model rotations
                           (velocity(yn_hat) - velocity(yn)).abs().mean() +  // per frame
                           fps * (velocity(pos_hat) - velocity(pos)).abs().mean() +  // m/s
                           0.1 * z.abs().mean() + 0.1 * z.square().mean() +          // small latent
                           0.1 * velocity(z).abs().mean();  // smooth latent
      opt.zero_grad();
      loss.backward();
      opt.step();
      sum += loss.item<double>();
      record(0, curve, sum, it, total);
    }
    {
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> chunks;
      for (int64_t f = 0; f < frames_; f += 4096) {
        const int64_t n = std::min<int64_t>(4096, frames_ - f);
        chunks.push_back(compressor->forward((y_.narrow(0, f, n) - y_mean_) / y_std_));
      }
      z_ = torch::cat(chunks, 0).contiguous();
    }
    const torch::Tensor in_mean = torch::cat({x_mean_, torch::zeros({latent_})});
    const torch::Tensor in_std = torch::cat({x_std_, torch::ones({latent_})});
    Mlp mlp = export_mlp(decompressor, in_mean, in_std, y_mean_, y_std_);
    const torch::Tensor rows = check_rows();
    check_export(0, decompressor, mlp,
                 torch::cat({x_.index_select(0, rows), z_.index_select(0, rows)}, 1), in_mean,
                 in_std, y_mean_, y_std_);
    if (report_) report_->latents = to_vector(z_);
    finish(0, curve, total, start);
    return mlp;
  }

  /// Stage 2: the stepper, rolled out over windows.
  Mlp train_stepper() {
    const auto start = std::chrono::steady_clock::now();
    state_ = torch::cat({x_, z_}, 1).contiguous();
    std::tie(state_mean_, state_std_) = column_stats(state_, 1e-3);
    const torch::Tensor pairs = torch::tensor(pair_starts_, torch::kInt64);
    const torch::Tensor deltas = state_.index_select(0, pairs + 1) - state_.index_select(0, pairs);
    const auto [delta_mean, delta_std] = column_stats(deltas, 1e-4);
    const int64_t S = dims_ + latent_;
    Net stepper(S, o_.hidden, o_.stepper_layers, S, Activation::relu);
    torch::optim::AdamW opt(stepper->parameters(),
                            torch::optim::AdamWOptions(o_.learning_rate).weight_decay(1e-3));
    const uint32_t total = iterations();
    LossCurve curve{"stepper", std::max<uint32_t>(1, total / 200), {}};
    double sum = 0;
    const torch::Tensor offsets = torch::arange(window_, torch::kInt64);
    for (uint32_t it = 0; it < total; ++it) {
      set_learning_rate(opt, o_.learning_rate, it, total);
      const torch::Tensor starts = sample(window_starts_, o_.batch);
      const int64_t B = starts.size(0);
      const torch::Tensor truth =
          state_.index_select(0, (starts.unsqueeze(1) + offsets).reshape({-1}))
              .reshape({B, window_, S});
      std::vector<torch::Tensor> rollout{truth.select(1, 0)};
      for (int64_t t = 1; t < window_; ++t) {
        const torch::Tensor& s = rollout.back();
        rollout.push_back(s + stepper->forward((s - state_mean_) / state_std_) * delta_std +
                          delta_mean);
      }
      const torch::Tensor predicted = torch::stack(rollout, 1);
      const auto change = [this](const torch::Tensor& t) {
        return t.narrow(1, 1, window_ - 1) - t.narrow(1, 0, window_ - 1);
      };
      torch::Tensor loss = ((predicted - truth) / state_std_).abs().mean() +
                           ((change(predicted) - change(truth)) / delta_std).abs().mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
      sum += loss.item<double>();
      record(1, curve, sum, it, total);
    }
    Mlp mlp = export_mlp(stepper, state_mean_, state_std_, delta_mean, delta_std);
    check_export(1, stepper, mlp, state_.index_select(0, check_rows()), state_mean_, state_std_,
                 delta_mean, delta_std);
    finish(1, curve, total, start);
    return mlp;
  }

  /// Stage 3: the projector, on noisy queries answered by the exact search.
  Mlp train_projector() {
    const auto start = std::chrono::steady_clock::now();
    const match::BoundedTreeSearch search(db_.features);
    const int64_t S = dims_ + latent_;
    Net projector(dims_, o_.hidden, o_.projector_layers, S, Activation::relu);
    torch::optim::AdamW opt(projector->parameters(),
                            torch::optim::AdamWOptions(o_.learning_rate).weight_decay(1e-3));
    const uint32_t total = iterations();
    LossCurve curve{"projector", std::max<uint32_t>(1, total / 200), {}};
    double sum = 0;
    std::vector<int64_t> nearest(o_.batch);
    for (uint32_t it = 0; it < total; ++it) {
      set_learning_rate(opt, o_.learning_rate, it, total);
      const torch::Tensor idx = sample(searchable_, o_.batch);
      const int64_t B = idx.size(0);
      const torch::Tensor sigma = torch::rand({B, 1});
      const torch::Tensor query =
          (x_.index_select(0, idx) + sigma * x_std_ * torch::randn({B, dims_})).contiguous();
      const float* q = query.data_ptr<float>();
      for (int64_t b = 0; b < B; ++b) {
        const match::SearchResult r =
            search.search(std::span<const float>(q + b * dims_, size_t(dims_)));
        nearest[size_t(b)] = r.found() ? int64_t(r.frame) : idx[b].item<int64_t>();
      }
      const torch::Tensor target =
          state_.index_select(0, torch::tensor(nearest, torch::kInt64).narrow(0, 0, B));
      const torch::Tensor predicted =
          projector->forward((query - x_mean_) / x_std_) * state_std_ + state_mean_;
      const torch::Tensor distance = (predicted.narrow(1, 0, dims_) - query).square().sum(1);
      const torch::Tensor best = (target.narrow(1, 0, dims_) - query).square().sum(1);
      torch::Tensor loss = ((predicted - target) / state_std_).abs().mean() +
                           0.3 * (distance.sqrt() - best.sqrt()).abs().mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
      sum += loss.item<double>();
      record(2, curve, sum, it, total);
    }
    Mlp mlp = export_mlp(projector, x_mean_, x_std_, state_mean_, state_std_);
    check_export(2, projector, mlp, x_.index_select(0, check_rows()), x_mean_, x_std_, state_mean_,
                 state_std_);
    finish(2, curve, total, start);
    return mlp;
  }

  std::vector<float> start_state() const { return to_vector(state_.select(0, 0)); }

 private:
  /// Runs the exported network and libtorch's on `inputs` (rows of raw network inputs) and
  /// records the largest difference, relative to max(1, |libtorch|).
  void check_export(int network, Net& net, const Mlp& mlp, const torch::Tensor& inputs,
                    const torch::Tensor& in_mean, const torch::Tensor& in_std,
                    const torch::Tensor& out_mean, const torch::Tensor& out_std) {
    if (!report_) return;
    torch::NoGradGuard no_grad;
    const torch::Tensor reference =
        (net->forward((inputs - in_mean) / in_std) * out_std + out_mean).contiguous();
    const torch::Tensor rows = inputs.contiguous();
    std::vector<float> out(mlp.outputs()), scratch(mlp.scratch_floats());
    double worst = 0;
    for (int64_t r = 0; r < rows.size(0); ++r) {
      const float* in = rows.data_ptr<float>() + r * rows.size(1);
      mlp.evaluate(std::span<const float>(in, size_t(rows.size(1))), out, scratch);
      const float* ref = reference.data_ptr<float>() + r * reference.size(1);
      for (size_t o = 0; o < out.size(); ++o)
        worst = std::max(worst, std::abs(double(out[o]) - double(ref[o])) /
                                    std::max(1.0, std::abs(double(ref[o]))));
    }
    report_->export_error[network] = worst;
  }

  /// 256 frames for check_export, from their own generator (so that asking for a report does
  /// not change what is trained).
  torch::Tensor check_rows() const {
    std::mt19937_64 rng(o_.seed ^ 0x9e3779b97f4a7c15ull);
    std::uniform_int_distribution<size_t> pick(0, searchable_.size() - 1);
    std::vector<int64_t> idx(256);
    for (int64_t& i : idx) i = searchable_[pick(rng)];
    return torch::tensor(idx, torch::kInt64);
  }

  void finish(int network, LossCurve& curve, uint32_t total,
              std::chrono::steady_clock::time_point start) {
    if (!report_) return;
    report_->seconds[network] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report_->iterations[network] = total;
    report_->curves.push_back(std::move(curve));
  }

  const match::Database& db_;
  TrainOptions o_;
  TrainReport* report_;
  const TrainProgress& progress_;
  std::mt19937_64 rng_;
  int64_t frames_ = 0, dims_ = 0, latent_ = 0, pose_size_ = 0, window_ = 0;
  torch::Tensor x_, y_, z_, state_;
  torch::Tensor x_mean_, x_std_, y_mean_, y_std_, state_mean_, state_std_;
  std::vector<int64_t> pair_starts_, window_starts_, searchable_;
};

void check(const match::Database& db, const TrainOptions& o) {
  const auto bad = [](const std::string& what) { throw Error("", "learn options", what); };
  if (o.latent_dims == 0 || o.hidden == 0 || o.batch == 0) bad("sizes must be > 0");
  if (o.stepper_window < 2) bad("the stepper window must be at least 2 frames");
  if (!(o.epochs > 0) || !std::isfinite(o.epochs)) bad("epochs must be > 0");
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate))
    bad("the learning rate must be > 0");
  if (o.threads < 1) bad("threads must be ≥ 1");
  if (!db.has_poses())
    throw Error("", "database",
                "learning needs the database's poses (built without --features-only)");
  bool trajectory = false;
  for (const match::FeatureGroup& g : db.groups) trajectory |= g.name == "trajectory_position";
  if (!trajectory) throw Error("", "database", "the database has no trajectory features");
}

}  // namespace

match::LearnedModel train_learned_model(const match::Database& db, const TrainOptions& options,
                                        TrainReport* report, const TrainProgress& progress) {
  check(db, options);
  // Reproducible: one seed for initialization and noise, deterministic kernels, a fixed thread
  // count (a reduction split another way rounds differently).
  torch::manual_seed(options.seed);
  at::globalContext().setDeterministicAlgorithms(true, false);
  at::set_num_threads(options.threads);
  if (report) *report = {};
  Trainer trainer(db, options, report, progress);
  match::LearnedModel model;
  model.fps = db.fps;
  model.trajectory_times = db.trajectory_times;
  model.groups = db.groups;
  model.mean = db.mean;
  model.joints = db.joints;
  model.skeleton = db.skeleton;
  model.latent_dims = options.latent_dims;
  model.trained_frames = db.frames();
  model.decompressor = trainer.train_decompressor();
  model.stepper = trainer.train_stepper();
  model.projector = trainer.train_projector();
  model.start_state = trainer.start_state();
  return model;
}

}  // namespace kinema::learn
