/* Waiting for the GPU, measured; see waits.h. */
#include "waits.h"
#include "../common/check.h"
#include "../common/timing.h"

kernel_wait kernel_wait_open(lab_run *run, int clock_reads, tally *logged)
{
    kernel_wait k = {(launch_record *)lab_device(run, sizeof(launch_record)),
                     (launch_record *)lab_pinned(run, sizeof(launch_record)), 0, clock_reads,
                     logged};
    return k;
}

double kernel_wait_measure(kernel_wait *k, cudaStream_t stream, uint64_t ns, cudaEvent_t done,
                           double nap_us, double *late_us)
{
    launch_record rec;
    long long offset = host_minus_gpu_clock_ns(stream, k->h_clock, k->clock_reads);
    uint64_t tag = ++k->tag;
    double returned_ms;
    spin_and_log<<<1, 1, 0, stream>>>(ns, tag, k->d_rec);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(done, stream));
    double cpu = event_wait(done, nap_us, &returned_ms);
    CUDA_CHECK(cudaMemcpy(&rec, k->d_rec, sizeof rec, cudaMemcpyDeviceToHost));
    tally_add(k->logged, 1, rec.tag != tag || rec.end_ns - rec.start_ns < ns, 0);
    *late_us = ((long long)(returned_ms * 1e6) - ((long long)rec.end_ns + offset)) / 1e3;
    return cpu;
}

double dependency_hop_us(enum hop_way how, const cudaStream_t *s, cudaEvent_t order,
                         cudaEvent_t blocking, event_timer *timer, int hops, int *gate_late)
{
    if (how == HOP_GPU) {
        spin_for_ns<<<1, 1, 0, s[0]>>>(ns_from_ms(2)); /* the gate: 2 ms >> 100 issues */
        CHECK_LAUNCH();
        event_timer_start(timer, s[0]);
    }
    double t0 = host_time_ms();
    for (int i = 0; i < hops; i++) {
        cudaStream_t st = s[how == HOP_GPU ? i % 2 : 0];
        if (how == HOP_GPU && i)
            CUDA_CHECK(cudaStreamWaitEvent(st, order, 0));
        spin_for_ns<<<1, 1, 0, st>>>(0);
        CHECK_LAUNCH();
        if (how == HOP_GPU) {
            CUDA_CHECK(cudaEventRecord(order, st));
        } else if (how == HOP_STREAM_SYNC) {
            CUDA_CHECK(cudaStreamSynchronize(st));
        } else {
            CUDA_CHECK(cudaEventRecord(blocking, st));
            CUDA_CHECK(cudaEventSynchronize(blocking));
        }
    }
    if (how != HOP_GPU)
        return (host_time_ms() - t0) * 1e3 / hops;
    *gate_late += event_finished(timer->start);
    event_timer_stop(timer, s[(hops - 1) % 2]);
    return event_timer_ms(timer) * 1e3 / hops;
}
