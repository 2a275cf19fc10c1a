#!/usr/bin/env python3
"""torch_lab14: lab14's partition through PyTorch. Does work in a green context run on its SMs only?

PyTorch 2.10 and newer has torch.cuda.green_contexts.GreenContext (beta): a
green context of num_sms SMs, and ctx.Stream(), a stream whose kernels run
on those SMs only (seen working with 2.11 on an H100). The test: one large fp32 matmul, many waves
of blocks, on the whole GPU and then in a stream of a green context of k SMs.
Model: a kernel of many waves takes about SMs / k times as long on k SMs
(its waves; a matmul's waves are not quite whole, so the verdict allows half
of that and more). The product is checked against the CPU's on small
integers, so every sum is exact. What it does not show is lab14's lesson
proper: there the background runs in a second green context (the rest of
the SMs); here it would stay in PyTorch's own context, on every SM, the
partition's included (see lab14's handout, "In PyTorch").
Run: python3 labs/lab14_green_contexts/torch_lab14.py [--quick] [--json] [--reps N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, cannot_run  # noqa: E402

K = 16  # lab14's default partition, the issue's
lab = Lab("torch_lab14", "green contexts from PyTorch: a matmul on k SMs", reps=10, quick_reps=3)
torch = lab.torch
green = getattr(getattr(torch.cuda, "green_contexts", None), "GreenContext", None)
if green is None or not hasattr(green, "Stream"):
    cannot_run(lab.name, f"PyTorch {torch.__version__} has no torch.cuda.green_contexts.GreenContext "
                         "with Stream() (2.11 has it)")
torch.backends.cuda.matmul.allow_tf32 = False
sms = torch.cuda.get_device_properties(0).multi_processor_count
torch.zeros(1, device="cuda")  # the primary context first: the green context is made beside it
try:
    ctx = green(num_sms=K)
except TypeError:  # 2.10-2.11 spell it create(num_sms)
    ctx = green.create(K)
part = ctx.Stream()
n = 2048 if lab.args.quick else 4096
a, b = (torch.randint(-4, 5, (n, n)).float() for _ in range(2))
reference = a[:64] @ b  # a slice: the CPU's product of all of it takes seconds
a, b, c = a.cuda(), b.cuda(), torch.empty(n, n, device="cuda")

lab.say("\nA matmul on the whole GPU, then in a green context")
lab.setup("SMs", sms, "the whole GPU")
lab.setup("green context asked", K, "SMs (the driver rounds up to its granularity)")
whole = lab.median_ms(lambda: torch.mm(a, b, out=c), torch.cuda.Stream())
c.fill_(float("nan"))
in_part = lab.median_ms(lambda: torch.mm(a, b, out=c), part)
torch.cuda.synchronize()
wrong = int((c[:64].cpu() != reference).sum())
lab.measured(f"{n}x{n} matmul, whole GPU", whole, "ms")
lab.measured(f"{n}x{n} matmul, {K}-SM green context", in_part, "ms", whole * sms / K, "whole x SMs / k")
lab.check("product_right", wrong, reference.numel(), "elements differ from the CPU's")
ratio = in_part / whole
lab.verdict("green_context_holds_fewer_sms", ratio >= 0.5 * sms / K,
            f"{ratio:.1f}x as long on {K} SMs as on {sms}", f"at least half of SMs / k = {0.5 * sms / K:.1f}x")
lab.finish()
