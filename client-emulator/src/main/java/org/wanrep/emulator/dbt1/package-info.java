/**
 * The OSDL-DBT-1 (TPC-W) workload: schema and deterministic data generator, the 14 interactions as
 * PL/pgSQL functions with their table sets, emulated browsers drawing interactions from the
 * browsing, shopping and ordering mixes. See docs/dbt1.md.
 */
package org.wanrep.emulator.dbt1;
