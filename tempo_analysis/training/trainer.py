"""Trainer: the one training loop every tempo_analysis model uses.

    trainer = Trainer(model, TrainConfig(max_epochs=3, lr=2e-5), loss_fn=..., eval_fn=...)
    trainer.fit(train_data, dev_data)       # returns self; model is trained in place
    trainer.history_                        # one row per optimiser step (+ eval metrics at eval points)

One optimiser step = `grad_accum_steps` micro-batches whose gradients really accumulate (loss is
divided by the group's size, zero_grad only after the step; an epoch's last partial group still
steps). The LR schedule moves once per optimiser step. "Eval points" are every `eval_every`
optimiser steps (or each epoch end when None) plus the very end: there the dev metrics are
computed, the best weights are remembered, early stopping is decided, and, with `checkpoint_dir`,
`last.safetensors` (full state) and `best.safetensors` (weights) are written atomically.
A rerun with the same config resumes from `last` and ends with the same weights as a run that was
never interrupted (model, optimiser, scheduler, counters, history and every RNG are restored; the
data position is replayed). Under torchrun the same code runs DDP (see distributed.py).

Before any work, `fit` checks `checkpoint_dir`: a `best`/`last.safetensors` there that the Trainer
did not write (no Trainer metadata) is never replaced nor resumed from (ForeignCheckpointError, a
DataError naming the file), and temp files of a run that was killed mid-write are removed. A kill
at any moment leaves the previous `last.safetensors` complete and loadable (atomic rename).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import torch
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, DistributedSampler, IterableDataset
from tqdm.auto import tqdm

from tempo_analysis.outputs import clean_stale_temps

from . import checkpoint as ckpt
from . import distributed as ddp
from .batches import OnDevice, default_loss_fn, is_map_dataset, move_to_device, seed_worker, to_cpu
from .config import TrainConfig, lr_factor
from .seeding import get_rng_state, pick_device, seed_everything, set_rng_state

RESERVED = ("step", "epoch", "train_loss", "lr")            # history columns eval_fn may not reuse
RESUME_MUST_MATCH = ("batch_size", "grad_accum_steps", "seed", "shuffle")  # else data position is wrong


class Trainer:
    """Seeded training loop: grad accumulation, per-step LR schedule, early stopping, checkpoints, DDP.

    model:        a torch.nn.Module, trained in place (moved to the picked device).
    loss_fn:      loss_fn(model, batch) -> scalar tensor. Default: model(**batch).loss (or ["loss"]).
                  Under DDP `model` is the DistributedDataParallel wrapper: call it as model(...)
                  (reach the plain module as model.module).
    eval_fn:      eval_fn(model, dev_batches) -> {name: float}; default {"loss": mean dev-batch loss}.
    collate_fn:   used when the Trainer builds DataLoaders from a Dataset.
    param_groups: list of dicts for the built-in AdamW (per-group lr etc.). Default: two groups,
                  weight decay on >=2-D weights only.  optimizer: any torch optimizer instead.
    Data: a map-style Dataset (seeded, sharded loaders are built), an IterableDataset, a DataLoader,
    or any re-iterable of batches (used as is; under DDP shard it yourself). history_ rows:
    {"step", "epoch" (1-based), "train_loss", "lr" (the lr that step used), eval metrics...}.
    """

    def __init__(self, model: torch.nn.Module, config: TrainConfig | None = None, loss_fn=None, eval_fn=None,
                 collate_fn=None, param_groups=None, optimizer: torch.optim.Optimizer | None = None):
        if not isinstance(model, torch.nn.Module):
            raise ValueError(f"model is a {type(model).__name__}; Trainer needs a torch.nn.Module")
        config = TrainConfig() if config is None else config
        if not isinstance(config, TrainConfig):
            raise ValueError(f"config is a {type(config).__name__}; pass a TrainConfig(...)")
        if param_groups is not None and optimizer is not None:
            raise ValueError("pass either param_groups (for the built-in AdamW) or optimizer, not both")
        self.model, self.config = model, config
        self.loss_fn = loss_fn or default_loss_fn     # loss_fn(model, batch) -> scalar tensor
        self.eval_fn = eval_fn                        # eval_fn(model, dev_batches) -> {name: float}
        self.collate_fn, self.param_groups = collate_fn, param_groups
        self._user_optimizer = optimizer
        self._user_lrs = [g["lr"] for g in optimizer.param_groups] if optimizer is not None else None
        self.device_, self.dist_ = None, ddp.DistInfo()
        self._wrapped = None                          # DDP wrapper (or the model) used for training
        self._reset_state()

    def _reset_state(self):
        self.history_, self.global_step_, self.stopped_early_ = [], 0, False
        self.best_metric_, self.best_step_ = None, None
        self._epoch, self._batch_in_epoch, self._bad_evals, self._last_point = 0, 0, 0, 0
        self._best_state = None                       # CPU copy of the best weights (restore_best)
        self._epoch_rng = None                        # RNG state at the start of the current epoch
        self._postfix = {}                            # progress-bar fields: loss, lr, dev metric

    # ---------------------------------------------------------------------------------------------
    # Devices, data loaders
    # ---------------------------------------------------------------------------------------------
    def _setup(self):
        """Pick the device and join DDP (once), move the model there (every call: the user may have
        moved it since), and wrap it in DDP (once, after the move)."""
        if self.device_ is None:
            self.device_ = pick_device(self.config.device)
            self.dist_ = ddp.setup(self.device_)
        self.model.to(self.device_)
        if self._wrapped is None:
            self._wrapped = ddp.wrap_model(self.model, self.device_, self.dist_, self.config.find_unused_parameters)
        return self._wrapped

    def _loader(self, dataset, batch_size, shuffle, shard, epoch=0, skip_batches=0):
        """Seeded DataLoader over a map-style Dataset (rank's shard under DDP) and its batch count."""
        world, rank = (self.dist_.world_size, self.dist_.rank) if shard else (1, 0)
        if len(dataset) == 0:
            raise ValueError("the dataset is empty; pass at least one example")
        sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=shuffle,
                                     seed=self.config.seed, drop_last=False)  # same order math for world=1
        sampler.set_epoch(epoch)                                              # reshuffle per epoch
        indices = list(sampler)
        seed = self.config.seed + epoch
        loader = DataLoader(dataset, batch_size=batch_size, sampler=indices[skip_batches * batch_size:],
                            collate_fn=self.collate_fn, num_workers=self.config.num_workers,
                            pin_memory=self.device_.type == "cuda",
                            generator=torch.Generator().manual_seed(seed),   # never touches global RNG
                            worker_init_fn=seed_worker)
        return loader, math.ceil(len(indices) / batch_size)

    def _train_batches(self, data, epoch, skip):
        """(iterator over `epoch`'s batches after the first `skip`, number of batches in the epoch or None)."""
        if is_map_dataset(data):
            loader, n = self._loader(data, self.config.batch_size, self.config.shuffle, True, epoch, skip)
            return iter(loader), n
        if isinstance(data, IterableDataset):
            data = DataLoader(data, batch_size=self.config.batch_size, collate_fn=self.collate_fn,
                              num_workers=self.config.num_workers)
        if isinstance(getattr(data, "sampler", None), DistributedSampler):
            data.sampler.set_epoch(epoch)                                     # user-built DDP loader
        if not hasattr(data, "__iter__"):
            raise ValueError(f"train_data is a {type(data).__name__}; pass a torch Dataset, a DataLoader "
                             "or an iterable of batches")
        try:
            n = len(data)
        except TypeError:
            n = None
        iterator = iter(data)
        for _ in range(skip):                                  # replay (eagerly) what was already trained on
            next(iterator, None)
        return iterator, n

    def _eval_batches(self, data, shard):
        """What eval_fn/predict iterate: Datasets/DataLoaders become on-device batches; others pass raw."""
        bs = self.config.eval_batch_size or self.config.batch_size
        if is_map_dataset(data):
            return OnDevice(self._loader(data, bs, False, shard)[0], self.device_)
        if isinstance(data, IterableDataset):
            data = DataLoader(data, batch_size=bs, collate_fn=self.collate_fn)
        if isinstance(data, DataLoader):
            return OnDevice(data, self.device_)
        return data

    # ---------------------------------------------------------------------------------------------
    # Optimiser and schedule
    # ---------------------------------------------------------------------------------------------
    def _build_optimizer(self):
        cfg = self.config
        if self._user_optimizer is not None:                   # fresh schedule from the original lrs
            for g, lr in zip(self._user_optimizer.param_groups, self._user_lrs):
                g["lr"] = g["initial_lr"] = lr
            return self._user_optimizer
        if self.param_groups is not None:
            groups = [dict(g, params=list(g["params"])) for g in self.param_groups]
        else:                                                   # nanoGPT/HF rule: no decay on biases/norms
            params = [p for p in self.model.parameters() if p.requires_grad]
            groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": cfg.weight_decay},
                      {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
            groups = [g for g in groups if g["params"]]
        if not any(p.requires_grad for g in groups for p in g["params"]):
            raise ValueError("the model has no trainable parameters (requires_grad=False everywhere); unfreeze some")
        return torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=cfg.betas)

    def _total_steps(self, train_data):
        """Optimiser steps the schedule spans: min(epochs * ceil(batches / accum), max_steps)."""
        cfg = self.config
        if is_map_dataset(train_data):
            n = math.ceil(math.ceil(len(train_data) / self.dist_.world_size) / cfg.batch_size)
        else:
            try:
                n = len(train_data)
            except TypeError:
                n = None
        by_epochs = cfg.max_epochs * math.ceil(n / cfg.grad_accum_steps) if (n and cfg.max_epochs) else None
        total = min(x for x in (by_epochs, cfg.max_steps) if x is not None) if (by_epochs or cfg.max_steps) else None
        if total is None and cfg.schedule != "constant":
            raise ValueError(f"TrainConfig.schedule={cfg.schedule!r} needs the number of optimiser steps, but "
                             "train_data has no len(): set max_steps, or use schedule='constant'")
        return total

    # ---------------------------------------------------------------------------------------------
    # fit
    # ---------------------------------------------------------------------------------------------
    def fit(self, train_data, dev_data=None) -> "Trainer":
        """Train `self.model` in place on `train_data`; evaluate on `dev_data`. Returns self."""
        cfg = self.config
        if cfg.patience is not None and dev_data is None:
            raise ValueError("TrainConfig.patience is set but dev_data is None; pass dev_data or patience=None")
        self._check_checkpoint_dir()                    # before any work: fails in milliseconds
        model = self._setup()
        self._reset_state()
        seed_everything(cfg.seed)
        self.optimizer_ = self._build_optimizer()
        self.total_steps_ = total = self._total_steps(train_data)
        warmup = cfg.resolve_warmup(total)
        self.scheduler_ = LambdaLR(self.optimizer_, lambda s: lr_factor(s, total, warmup, cfg.schedule))
        resumed = self._maybe_resume()                 # RNG states to restore, or None (fresh run)
        self.optimizer_.zero_grad(set_to_none=True)
        params = [p for g in self.optimizer_.param_groups for p in g["params"]]
        accum, self._dev_data = cfg.grad_accum_steps, dev_data

        bar = tqdm(total=total, initial=self.global_step_, desc="train", unit="step", dynamic_ncols=True,
                   disable=not (cfg.progress and self.dist_.is_main))
        try:
            done = self._finished()
            while not done:
                skip = self._batch_in_epoch                        # > 0 only when resuming mid-epoch
                # RNG bookkeeping for exact resume: the checkpoint holds the RNG state at the start of
                # its epoch (to replay the data order) and at the checkpoint itself (to continue).
                if resumed is not None:
                    set_rng_state(*(resumed["epoch_rng"] if skip else resumed["rng"]))
                self._epoch_rng = get_rng_state("epoch_rng.")
                iterator, n = self._train_batches(train_data, self._epoch, skip)
                if resumed is not None and skip:
                    set_rng_state(*resumed["rng"])
                resumed = None
                model.train()
                i, micro_losses, group = skip, [], accum
                for batch in iterator:
                    pos = i % accum
                    if pos == 0:                                   # a new accumulation group starts
                        group = accum if n is None else max(1, min(accum, n - i))   # last one may be short
                        micro_losses = []
                    last_micro = pos == group - 1
                    batch = move_to_device(batch, self.device_)
                    with ddp.no_sync(model, skip_sync=not last_micro):   # DDP all-reduces only at the end
                        loss = self.loss_fn(model, batch)
                        value = self._check_loss(loss)
                        (loss / group).backward()                  # grads SUM over the group's micro-batches
                    micro_losses.append(value)
                    i += 1
                    self._batch_in_epoch = i
                    if last_micro:
                        done = self._optimizer_step(params, micro_losses, bar)
                        micro_losses = []
                        if done:
                            break
                if not done and micro_losses:                      # unsized data ended mid-group:
                    for p in params:                               # grads were divided by `group`, not len
                        if p.grad is not None:
                            p.grad.mul_(group / len(micro_losses))
                    ddp.all_reduce_grads(params, self.dist_)       # its last micro ran under no_sync
                    done = self._optimizer_step(params, micro_losses, bar)
                if i == 0:
                    raise ValueError(f"train_data yielded no batches in epoch {self._epoch + 1}; pass a re-iterable "
                                     "(Dataset, DataLoader, list), not a one-shot generator")
                if not done:                                       # the epoch ran to its end
                    self._epoch, self._batch_in_epoch = self._epoch + 1, 0
                    if cfg.eval_every is None:
                        done = self._eval_point(dev_data, bar)
                    done = done or self._finished()
            if self._last_point != self.global_step_:              # evaluate/save the final weights
                self._eval_point(dev_data, bar)
        finally:
            bar.close()
        if cfg.restore_best and self._best_state is not None:
            self.model.load_state_dict(self._best_state)
        self.model.eval()
        return self

    def _finished(self) -> bool:
        cfg = self.config
        return (self.stopped_early_ or (cfg.max_steps is not None and self.global_step_ >= cfg.max_steps)
                or (cfg.max_epochs is not None and self._epoch >= cfg.max_epochs))

    def _check_loss(self, loss) -> float:
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ValueError(f"loss_fn must return a scalar tensor, got {type(loss).__name__}"
                             f"{tuple(loss.shape) if isinstance(loss, torch.Tensor) else ''}; reduce it with .mean()")
        value = float(loss.detach())
        if not math.isfinite(value):
            raise FloatingPointError(f"loss is {value} at optimiser step {self.global_step_ + 1} (epoch "
                                     f"{self._epoch + 1}); lower TrainConfig.lr, check the inputs, or clip gradients")
        return value

    def _optimizer_step(self, params, micro_losses, bar) -> bool:
        """Clip, step, advance the schedule, zero grads, log a history row; True when training is over."""
        cfg = self.config
        if cfg.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        lr = self.optimizer_.param_groups[0]["lr"]                # the lr THIS update uses
        self.optimizer_.step()
        self.scheduler_.step()                                     # once per optimiser step
        self.optimizer_.zero_grad(set_to_none=True)                # only now: grads accumulated until here
        self.global_step_ += 1
        train_loss = sum(micro_losses) / len(micro_losses)
        train_loss = ddp.mean_across_ranks({"l": train_loss}, self.dist_, self.device_)["l"]
        self.history_.append({"step": self.global_step_, "epoch": self._epoch + 1, "train_loss": train_loss, "lr": lr})
        bar.update(1)
        self._postfix.update(loss=f"{train_loss:.4f}", lr=f"{lr:.2e}")
        bar.set_postfix(self._postfix, refresh=False)
        done = self._finished()
        if not done and cfg.eval_every is not None and self.global_step_ % cfg.eval_every == 0:
            done = self._eval_point(self._dev_data, bar)
        return done

    # ---------------------------------------------------------------------------------------------
    # Eval points: metrics, best weights, early stopping, checkpoints
    # ---------------------------------------------------------------------------------------------
    def _eval_point(self, dev_data, bar) -> bool:
        """Evaluate, track the best, decide early stopping, write checkpoints. True = stop."""
        cfg = self.config
        self._last_point = self.global_step_
        improved = False
        if dev_data is not None:
            metrics = self.evaluate(dev_data)
            if cfg.metric not in metrics:
                raise ValueError(f"TrainConfig.metric={cfg.metric!r} is not among eval_fn's keys "
                                 f"{sorted(metrics)}; set metric= to one of them")
            if self.history_:
                self.history_[-1].update(metrics)
            value = metrics[cfg.metric]
            best = self.best_metric_
            improved = best is None or (value > best if cfg.greater_is_better else value < best)
            if improved:
                self.best_metric_, self.best_step_, self._bad_evals = value, self.global_step_, 0
                if cfg.restore_best:
                    self._best_state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
            else:
                self._bad_evals += 1
                if cfg.patience is not None and self._bad_evals >= cfg.patience:
                    self.stopped_early_ = True
            self._postfix[f"dev_{cfg.metric}"] = f"{value:.4f}"
            bar.set_postfix(self._postfix, refresh=False)
        if cfg.checkpoint_dir is not None:
            self._save(improved)
        return self.stopped_early_ or self._finished()

    def _trainer_state(self) -> dict:
        return {"global_step": self.global_step_, "epoch": self._epoch, "batch_in_epoch": self._batch_in_epoch,
                "bad_evals": self._bad_evals, "last_point": self._last_point, "best_metric": self.best_metric_,
                "best_step": self.best_step_, "stopped_early": self.stopped_early_, "history": self.history_,
                "total_steps": self.total_steps_}

    def _save(self, improved: bool):
        """Rank 0 writes best.safetensors (weights, when improved) and last.safetensors (everything)."""
        cfg, folder = self.config, Path(self.config.checkpoint_dir)
        if self.dist_.is_main:
            w_tensors, w_meta = ckpt.model_tensors(self.model)
            if improved:
                ckpt.save_checkpoint(folder / "best.safetensors", w_tensors, {
                    "kind": "best", "model": w_meta, "step": self.best_step_, "metric": cfg.metric,
                    "value": self.best_metric_, "config": cfg.to_dict()})
            o_tensors, o_meta = ckpt.optimizer_tensors(self.optimizer_)
            r_tensors, r_meta = get_rng_state("rng.")
            e_tensors, e_meta = self._epoch_rng
            ckpt.save_checkpoint(folder / "last.safetensors", {**w_tensors, **o_tensors, **r_tensors, **e_tensors}, {
                "kind": "last", "format_version": 1, "config": cfg.to_dict(), "world_size": self.dist_.world_size,
                "model": w_meta, "optimizer": o_meta, "scheduler": ckpt.scheduler_state(self.scheduler_),
                "rng": r_meta, "epoch_rng": e_meta, "trainer": self._trainer_state()})
        ddp.barrier(self.dist_)                                    # nobody reads a file still being written

    def _check_checkpoint_dir(self):
        """Refuse a checkpoint_dir whose best/last.safetensors we did not write; drop dead runs' temp files."""
        cfg = self.config
        if cfg.checkpoint_dir is None:
            return
        folder = Path(cfg.checkpoint_dir)
        if folder.exists() and not folder.is_dir():
            raise ckpt.ForeignCheckpointError(f"TrainConfig.checkpoint_dir {str(folder)!r} is a file, not a folder. "
                                              "Fix: pass a folder path.")
        ckpt.check_ours(folder / "last.safetensors", "last")
        ckpt.check_ours(folder / "best.safetensors", "best")
        clean_stale_temps(folder)    # any rank may do it: only files of dead processes go

    def _maybe_resume(self):
        """Load checkpoint_dir/last.safetensors if present; return the RNG states to restore (or None)."""
        cfg = self.config
        if cfg.checkpoint_dir is None or not cfg.resume:
            return None
        folder = Path(cfg.checkpoint_dir)
        if not (folder / "last.safetensors").is_file():
            return None
        tensors, meta = ckpt.load_checkpoint(folder / "last.safetensors")
        if meta.get("kind") != "last":
            raise ValueError(f"{folder / 'last.safetensors'} is not a Trainer checkpoint; use another checkpoint_dir")
        for name in RESUME_MUST_MATCH:
            if meta["config"].get(name) != getattr(cfg, name):
                raise ValueError(f"{folder} was written with {name}={meta['config'].get(name)!r} but TrainConfig.{name}="
                                 f"{getattr(cfg, name)!r}; resume needs the same value (or resume=False / a new checkpoint_dir)")
        if meta["world_size"] != self.dist_.world_size:
            raise ValueError(f"{folder} was written by {meta['world_size']} process(es), this run has "
                             f"{self.dist_.world_size}; resume with the same torchrun --nproc_per_node")
        ckpt.load_model_tensors(self.model, tensors, meta["model"])
        ckpt.load_optimizer_tensors(self.optimizer_, tensors, meta["optimizer"])
        ckpt.load_scheduler_state(self.scheduler_, meta["scheduler"])
        t = meta["trainer"]
        self.global_step_, self._epoch, self._batch_in_epoch = t["global_step"], t["epoch"], t["batch_in_epoch"]
        self._bad_evals, self._last_point, self.stopped_early_ = t["bad_evals"], t["last_point"], t["stopped_early"]
        self.best_metric_, self.best_step_, self.history_ = t["best_metric"], t["best_step"], t["history"]
        best_path = folder / "best.safetensors"
        if cfg.restore_best and self.best_step_ is not None and best_path.is_file():
            b_tensors, b_meta = ckpt.load_checkpoint(best_path)
            if b_meta.get("step") == self.best_step_:               # else a crash came between the writes
                state = {k[len("model."):]: v for k, v in b_tensors.items() if k.startswith("model.")}
                state.update({alias: state[src] for alias, src in b_meta["model"].get("aliases", {}).items()})
                self._best_state = state
        return {"rng": (tensors, meta["rng"], "rng."), "epoch_rng": (tensors, meta["epoch_rng"], "epoch_rng.")}

    # ---------------------------------------------------------------------------------------------
    # evaluate / predict
    # ---------------------------------------------------------------------------------------------
    def evaluate(self, dev_data) -> dict:
        """Metrics on dev_data (eval mode, no_grad); averaged over ranks under DDP.

        Default: {"loss": mean of loss_fn over the dev batches}. A custom eval_fn(model, batches)
        gets the plain (unwrapped) model and, for a Dataset/DataLoader, on-device batches (this
        rank's shard under DDP); any other dev_data object is passed through unchanged.
        """
        self._setup()
        model, was_training = self.model, self.model.training
        model.eval()
        try:
            with torch.no_grad():
                batches = self._eval_batches(dev_data, shard=True)
                if self.eval_fn is not None:
                    metrics = self.eval_fn(model, batches)
                else:
                    batches = batches if isinstance(batches, OnDevice) else OnDevice(batches, self.device_)
                    losses = [self._check_loss(self.loss_fn(model, b)) for b in batches]
                    if not losses:
                        raise ValueError("dev_data yielded no batches; pass a non-empty dev set or dev_data=None")
                    metrics = {"loss": sum(losses) / len(losses)}
        finally:
            model.train(was_training)
        if not isinstance(metrics, Mapping):
            raise ValueError(f"eval_fn must return a dict of floats, got {type(metrics).__name__}")
        clash = [k for k in metrics if k in RESERVED]
        if clash:
            raise ValueError(f"eval_fn returned reserved key(s) {clash} (history columns); rename them, e.g. 'eval_{clash[0]}'")
        try:
            metrics = {str(k): float(v) for k, v in metrics.items()}
        except (TypeError, ValueError):
            raise ValueError(f"eval_fn must return numbers, got {dict(metrics)!r}") from None
        return ddp.mean_across_ranks(metrics, self.dist_, self.device_)

    def predict(self, data, fn=None) -> list:
        """Run fn(model, batch) (default: model(**batch)) under inference_mode; list of per-batch CPU outputs.

        Every rank predicts on all of `data` (no sharding), so each gets the complete list.
        """
        self._setup()
        model, was_training = self.model, self.model.training
        fn = fn or (lambda m, b: m(**b) if isinstance(b, Mapping) else m(b))
        batches = self._eval_batches(data, shard=False)
        batches = batches if isinstance(batches, OnDevice) else OnDevice(batches, self.device_)
        model.eval()
        try:
            with torch.inference_mode():
                return [to_cpu(fn(model, b)) for b in batches]
        finally:
            model.train(was_training)

