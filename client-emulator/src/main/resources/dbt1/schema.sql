-- DBT-1 (TPC-W) schema. Every table has a primary key: write-set replication identifies rows by it,
-- and TableDigest orders by it. No foreign keys, as in DBT-1: a foreign-key check would lock the
-- parent table, and each function's declared table set would have to name it.
-- Times are timestamptz so a stored instant does not depend on a session's TimeZone.

DROP TABLE IF EXISTS shopping_cart_line, shopping_cart, cc_xacts, order_line, orders,
    address, customer, item, author, country;

CREATE TABLE country (
    co_id        int PRIMARY KEY,
    co_name      varchar(50) NOT NULL,
    co_exchange  numeric(12,6) NOT NULL,
    co_currency  varchar(18) NOT NULL
);

CREATE TABLE author (
    a_id     int PRIMARY KEY,
    a_fname  varchar(20) NOT NULL,
    a_lname  varchar(20) NOT NULL,
    a_mname  varchar(20) NOT NULL,
    a_dob    date NOT NULL,
    a_bio    varchar(500) NOT NULL
);

CREATE TABLE item (
    i_id          int PRIMARY KEY,
    i_title       varchar(60) NOT NULL,
    i_a_id        int NOT NULL,
    i_pub_date    date NOT NULL,
    i_publisher   varchar(60) NOT NULL,
    i_subject     varchar(60) NOT NULL,
    i_desc        varchar(500) NOT NULL,
    i_related1    int NOT NULL,
    i_related2    int NOT NULL,
    i_related3    int NOT NULL,
    i_related4    int NOT NULL,
    i_related5    int NOT NULL,
    i_thumbnail   varchar(40) NOT NULL,
    i_image       varchar(40) NOT NULL,
    i_srp         numeric(17,2) NOT NULL,
    i_cost        numeric(17,2) NOT NULL,
    i_avail       date NOT NULL,
    i_stock       int NOT NULL,
    i_isbn        char(13) NOT NULL,
    i_page        int NOT NULL,
    i_backing     varchar(15) NOT NULL,
    i_dimensions  varchar(25) NOT NULL
);

CREATE TABLE customer (
    c_id          int PRIMARY KEY,
    c_uname       varchar(20) NOT NULL,
    c_passwd      varchar(20) NOT NULL,
    c_fname       varchar(17) NOT NULL,
    c_lname       varchar(17) NOT NULL,
    c_addr_id     int NOT NULL,
    c_phone       varchar(18) NOT NULL,
    c_email       varchar(50) NOT NULL,
    c_since       date NOT NULL,
    c_last_visit  date NOT NULL,
    c_login       timestamptz NOT NULL,
    c_expiration  timestamptz NOT NULL,
    c_discount    numeric(3,2) NOT NULL,
    c_balance     numeric(17,2) NOT NULL,
    c_ytd_pmt     numeric(17,2) NOT NULL,
    c_birthdate   date NOT NULL,
    c_data        varchar(500) NOT NULL
);

CREATE TABLE address (
    addr_id       int PRIMARY KEY,
    addr_street1  varchar(40) NOT NULL,
    addr_street2  varchar(40) NOT NULL,
    addr_city     varchar(30) NOT NULL,
    addr_state    varchar(20) NOT NULL,
    addr_zip      varchar(10) NOT NULL,
    addr_co_id    int NOT NULL
);

CREATE TABLE orders (
    o_id            int PRIMARY KEY,
    o_c_id          int NOT NULL,
    o_date          timestamptz NOT NULL,
    o_sub_total     numeric(17,2) NOT NULL,
    o_tax           numeric(17,2) NOT NULL,
    o_total         numeric(17,2) NOT NULL,
    o_ship_type     varchar(10) NOT NULL,
    o_ship_date     timestamptz NOT NULL,
    o_bill_addr_id  int NOT NULL,
    o_ship_addr_id  int NOT NULL,
    o_status        varchar(15) NOT NULL
);

CREATE TABLE order_line (
    ol_o_id        int NOT NULL,
    ol_id          int NOT NULL,
    ol_i_id        int NOT NULL,
    ol_qty         int NOT NULL,
    ol_discount    numeric(3,2) NOT NULL,
    ol_comments    varchar(110) NOT NULL,
    PRIMARY KEY (ol_o_id, ol_id)
);

CREATE TABLE cc_xacts (
    cx_o_id        int PRIMARY KEY,
    cx_type        varchar(10) NOT NULL,
    cx_num         varchar(16) NOT NULL,
    cx_name        varchar(31) NOT NULL,
    cx_expiry      date NOT NULL,
    cx_auth_id     char(15) NOT NULL,
    cx_xact_amt    numeric(17,2) NOT NULL,
    cx_xact_date   timestamptz NOT NULL,
    cx_co_id       int NOT NULL
);

-- Carts are created by the interactions, never loaded. Ids are chosen by the client (bigint).
CREATE TABLE shopping_cart (
    sc_id          bigint PRIMARY KEY,
    sc_c_id        int,
    sc_date        timestamptz NOT NULL,
    sc_sub_total   numeric(17,2) NOT NULL DEFAULT 0,
    sc_tax         numeric(17,2) NOT NULL DEFAULT 0,
    sc_ship_cost   numeric(17,2) NOT NULL DEFAULT 0,
    sc_total       numeric(17,2) NOT NULL DEFAULT 0,
    sc_c_fname     varchar(17),
    sc_c_lname     varchar(17),
    sc_c_discount  numeric(3,2)
);

CREATE TABLE shopping_cart_line (
    scl_sc_id    bigint NOT NULL,
    scl_i_id     int NOT NULL,
    scl_qty      int NOT NULL,
    scl_cost     numeric(17,2) NOT NULL,
    scl_srp      numeric(17,2) NOT NULL,
    scl_title    varchar(60) NOT NULL,
    scl_backing  varchar(15) NOT NULL,
    PRIMARY KEY (scl_sc_id, scl_i_id)
);
