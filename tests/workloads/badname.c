/* badname - a program whose hot function's symbol is a C++ mangling that
 * would make a demangler write gigabytes: thirty nested back-references,
 * each doubling the argument before (f(pair<int, int>, pair<pair<int, int>,
 * pair<int, int> >, ...)). A profiler reads the names of its target's files:
 * this one must not take its memory or its time. Spins for SECONDS. */
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

void exploding(void) __asm__("_Z1fSt4pairIiiES_IS0_S0_ES_IS1_S1_ES_IS2_S2_ES_IS3_S3_ES_IS4_S4_ES_IS5_S5_ES_IS6_S6_ES_IS7_S7_ES_IS8_S8_ES_IS9_S9_ES_ISA_SA_ES_ISB_SB_ES_ISC_SC_ES_ISD_SD_ES_ISE_SE_ES_ISF_SF_ES_ISG_SG_ES_ISH_SH_ES_ISI_SI_ES_ISJ_SJ_ES_ISK_SK_ES_ISL_SL_ES_ISM_SM_ES_ISN_SN_ES_ISO_SO_ES_ISP_SP_ES_ISQ_SQ_ES_ISR_SR_ES_ISS_SS_ES_IST_ST_E");
void exploding(void)
{
    for (int i = 0; i < 100000; i++)
        sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
    double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    while (now() < end)
        exploding();
    return 0;
}
