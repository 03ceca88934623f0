def f0(x):
    return x + 0

def f1(x):
    return x + 1

def f2(x):
    return x + 2

def f3(x):
    return x + 3

def f4(x):
    return x + 4

def f5(x):
    return x + 5

def f6(x):
    return x + 6

def f7(x):
    return x + 7

def f8(x):
    return x + 8

def f9(x):
    return x + 9

def f10(x):
    return x + 10

def f11(x):
    return x + 11

def f12(x):
    return x + 12

def f13(x):
    return x + 13

def f14(x):
    return x + 14

def f15(x):
    return x + 15

def f16(x):
    return x + 16

def f17(x):
    return x + 17

def f18(x):
    return x + 18

def f19(x):
    return x + 19

def f20(x):
    return x + 20

def f21(x):
    return x + 21

def f22(x):
    return x + 22

def f23(x):
    return x + 23

def f24(x):
    return x + 24

def f25(x):
    return x + 25

def f26(x):
    return x + 26

def f27(x):
    return x + 27

def f28(x):
    return x + 28

def f29(x):
    return x + 29

def f30(x):
    return x + 30

def f31(x):
    return x + 31

def f32(x):
    return x + 32

def f33(x):
    return x + 33

def f34(x):
    return x + 34

def f35(x):
    return x + 35

def f36(x):
    return x + 36

def f37(x):
    return x + 37

def f38(x):
    return x + 38

def f39(x):
    return x + 39

def f40(x):
    return x + 40

def f41(x):
    return x + 41

def f42(x):
    return x + 42

def f43(x):
    return x + 43

def f44(x):
    return x + 44

def f45(x):
    return x + 45

def f46(x):
    return x + 46

def f47(x):
    return x + 47

def f48(x):
    return x + 48

def f49(x):
    return x + 49

def f50(x):
    return x + 50

def f51(x):
    return x + 51

def f52(x):
    return x + 52

def f53(x):
    return x + 53

def f54(x):
    return x + 54

def f55(x):
    return x + 55

def f56(x):
    return x + 56

def f57(x):
    return x + 57

def f58(x):
    return x + 58

def f59(x):
    return x + 59

def f60(x):
    return x + 60

def f61(x):
    return x + 61

def f62(x):
    return x + 62

def f63(x):
    return x + 63

def f64(x):
    return x + 64

def f65(x):
    return x + 65

def f66(x):
    return x + 66

def f67(x):
    return x + 67

def f68(x):
    return x + 68

def f69(x):
    return x + 69

def f70(x):
    return x + 70

def f71(x):
    return x + 71

def f72(x):
    return x + 72

def f73(x):
    return x + 73

def f74(x):
    return x + 74

def f75(x):
    return x + 75

def f76(x):
    return x + 76

def f77(x):
    return x + 77

def f78(x):
    return x + 78

def f79(x):
    return x + 79

def f80(x):
    return x + 80

def f81(x):
    return x + 81

def f82(x):
    return x + 82

def f83(x):
    return x + 83

def f84(x):
    return x + 84

def f85(x):
    return x + 85

def f86(x):
    return x + 86

def f87(x):
    return x + 87

def f88(x):
    return x + 88

def f89(x):
    return x + 89

def f90(x):
    return x + 90

def f91(x):
    return x + 91

def f92(x):
    return x + 92

def f93(x):
    return x + 93

def f94(x):
    return x + 94

def f95(x):
    return x + 95

def f96(x):
    return x + 96

def f97(x):
    return x + 97

def f98(x):
    return x + 98

def f99(x):
    return x + 99

def f100(x):
    return x + 100

def f101(x):
    return x + 101

def f102(x):
    return x + 102

def f103(x):
    return x + 103

def f104(x):
    return x + 104

def f105(x):
    return x + 105

def f106(x):
    return x + 106

def f107(x):
    return x + 107

def f108(x):
    return x + 108

def f109(x):
    return x + 109

def f110(x):
    return x + 110

def f111(x):
    return x + 111

def f112(x):
    return x + 112

def f113(x):
    return x + 113

def f114(x):
    return x + 114

def f115(x):
    return x + 115

def f116(x):
    return x + 116

def f117(x):
    return x + 117

def f118(x):
    return x + 118

def f119(x):
    return x + 119

def f120(x):
    return x + 120

def f121(x):
    return x + 121

def f122(x):
    return x + 122

def f123(x):
    return x + 123

def f124(x):
    return x + 124

def f125(x):
    return x + 125

def f126(x):
    return x + 126

def f127(x):
    return x + 127

def f128(x):
    return x + 128

def f129(x):
    return x + 129

def f130(x):
    return x + 130

def f131(x):
    return x + 131

def f132(x):
    return x + 132

def f133(x):
    return x + 133

def f134(x):
    return x + 134

def f135(x):
    return x + 135

def f136(x):
    return x + 136

def f137(x):
    return x + 137

def f138(x):
    return x + 138

def f139(x):
    return x + 139

def f140(x):
    return x + 140

def f141(x):
    return x + 141

def f142(x):
    return x + 142

def f143(x):
    return x + 143

def f144(x):
    return x + 144

def f145(x):
    return x + 145

def f146(x):
    return x + 146

def f147(x):
    return x + 147

def f148(x):
    return x + 148

def f149(x):
    return x + 149

def f150(x):
    return x + 150

def f151(x):
    return x + 151

def f152(x):
    return x + 152

def f153(x):
    return x + 153

def f154(x):
    return x + 154

def f155(x):
    return x + 155

def f156(x):
    return x + 156

def f157(x):
    return x + 157

def f158(x):
    return x + 158

def f159(x):
    return x + 159

def f160(x):
    return x + 160

def f161(x):
    return x + 161

def f162(x):
    return x + 162

def f163(x):
    return x + 163

def f164(x):
    return x + 164

def f165(x):
    return x + 165

def f166(x):
    return x + 166

def f167(x):
    return x + 167

def f168(x):
    return x + 168

def f169(x):
    return x + 169

def f170(x):
    return x + 170

def f171(x):
    return x + 171

def f172(x):
    return x + 172

def f173(x):
    return x + 173

def f174(x):
    return x + 174

def f175(x):
    return x + 175

def f176(x):
    return x + 176

def f177(x):
    return x + 177

def f178(x):
    return x + 178

def f179(x):
    return x + 179

def f180(x):
    return x + 180

def f181(x):
    return x + 181

def f182(x):
    return x + 182

def f183(x):
    return x + 183

def f184(x):
    return x + 184

def f185(x):
    return x + 185

def f186(x):
    return x + 186

def f187(x):
    return x + 187

def f188(x):
    return x + 188

def f189(x):
    return x + 189

def f190(x):
    return x + 190

def f191(x):
    return x + 191

def f192(x):
    return x + 192

def f193(x):
    return x + 193

def f194(x):
    return x + 194

def f195(x):
    return x + 195

def f196(x):
    return x + 196

def f197(x):
    return x + 197

def f198(x):
    return x + 198

def f199(x):
    return x + 199

def f200(x):
    return x + 200

def f201(x):
    return x + 201

def f202(x):
    return x + 202

def f203(x):
    return x + 203

def f204(x):
    return x + 204

def f205(x):
    return x + 205

def f206(x):
    return x + 206

def f207(x):
    return x + 207

def f208(x):
    return x + 208

def f209(x):
    return x + 209

def f210(x):
    return x + 210

def f211(x):
    return x + 211

def f212(x):
    return x + 212

def f213(x):
    return x + 213

def f214(x):
    return x + 214

def f215(x):
    return x + 215

def f216(x):
    return x + 216

def f217(x):
    return x + 217

def f218(x):
    return x + 218

def f219(x):
    return x + 219

def f220(x):
    return x + 220

def f221(x):
    return x + 221

def f222(x):
    return x + 222

def f223(x):
    return x + 223

def f224(x):
    return x + 224

def f225(x):
    return x + 225

def f226(x):
    return x + 226

def f227(x):
    return x + 227

def f228(x):
    return x + 228

def f229(x):
    return x + 229

def f230(x):
    return x + 230

def f231(x):
    return x + 231

def f232(x):
    return x + 232

def f233(x):
    return x + 233

def f234(x):
    return x + 234

def f235(x):
    return x + 235

def f236(x):
    return x + 236

def f237(x):
    return x + 237

def f238(x):
    return x + 238

def f239(x):
    return x + 239

def f240(x):
    return x + 240

def f241(x):
    return x + 241

def f242(x):
    return x + 242

def f243(x):
    return x + 243

def f244(x):
    return x + 244

def f245(x):
    return x + 245

def f246(x):
    return x + 246

def f247(x):
    return x + 247

def f248(x):
    return x + 248

def f249(x):
    return x + 249

def f250(x):
    return x + 250

def f251(x):
    return x + 251

def f252(x):
    return x + 252

def f253(x):
    return x + 253

def f254(x):
    return x + 254

def f255(x):
    return x + 255

def f256(x):
    return x + 256

def f257(x):
    return x + 257

def f258(x):
    return x + 258

def f259(x):
    return x + 259

def f260(x):
    return x + 260

def f261(x):
    return x + 261

def f262(x):
    return x + 262

def f263(x):
    return x + 263

def f264(x):
    return x + 264

def f265(x):
    return x + 265

def f266(x):
    return x + 266

def f267(x):
    return x + 267

def f268(x):
    return x + 268

def f269(x):
    return x + 269

def f270(x):
    return x + 270

def f271(x):
    return x + 271

def f272(x):
    return x + 272

def f273(x):
    return x + 273

def f274(x):
    return x + 274

def f275(x):
    return x + 275

def f276(x):
    return x + 276

def f277(x):
    return x + 277

def f278(x):
    return x + 278

def f279(x):
    return x + 279

def f280(x):
    return x + 280

def f281(x):
    return x + 281

def f282(x):
    return x + 282

def f283(x):
    return x + 283

def f284(x):
    return x + 284

def f285(x):
    return x + 285

def f286(x):
    return x + 286

def f287(x):
    return x + 287

def f288(x):
    return x + 288

def f289(x):
    return x + 289

def f290(x):
    return x + 290

def f291(x):
    return x + 291

def f292(x):
    return x + 292

def f293(x):
    return x + 293

def f294(x):
    return x + 294

def f295(x):
    return x + 295

def f296(x):
    return x + 296

def f297(x):
    return x + 297

def f298(x):
    return x + 298

def f299(x):
    return x + 299

def f300(x):
    return x + 300

def f301(x):
    return x + 301

def f302(x):
    return x + 302

def f303(x):
    return x + 303

def f304(x):
    return x + 304

def f305(x):
    return x + 305

def f306(x):
    return x + 306

def f307(x):
    return x + 307

def f308(x):
    return x + 308

def f309(x):
    return x + 309

def f310(x):
    return x + 310

def f311(x):
    return x + 311

def f312(x):
    return x + 312

def f313(x):
    return x + 313

def f314(x):
    return x + 314

def f315(x):
    return x + 315

def f316(x):
    return x + 316

def f317(x):
    return x + 317

def f318(x):
    return x + 318

def f319(x):
    return x + 319

def f320(x):
    return x + 320

def f321(x):
    return x + 321

def f322(x):
    return x + 322

def f323(x):
    return x + 323

def f324(x):
    return x + 324

def f325(x):
    return x + 325

def f326(x):
    return x + 326

def f327(x):
    return x + 327

def f328(x):
    return x + 328

def f329(x):
    return x + 329

def f330(x):
    return x + 330

def f331(x):
    return x + 331

def f332(x):
    return x + 332

def f333(x):
    return x + 333

def f334(x):
    return x + 334

def f335(x):
    return x + 335

def f336(x):
    return x + 336

def f337(x):
    return x + 337

def f338(x):
    return x + 338

def f339(x):
    return x + 339

def f340(x):
    return x + 340

def f341(x):
    return x + 341

def f342(x):
    return x + 342

def f343(x):
    return x + 343

def f344(x):
    return x + 344

def f345(x):
    return x + 345

def f346(x):
    return x + 346

def f347(x):
    return x + 347

def f348(x):
    return x + 348

def f349(x):
    return x + 349

def f350(x):
    return x + 350

def f351(x):
    return x + 351

def f352(x):
    return x + 352

def f353(x):
    return x + 353

def f354(x):
    return x + 354

def f355(x):
    return x + 355

def f356(x):
    return x + 356

def f357(x):
    return x + 357

def f358(x):
    return x + 358

def f359(x):
    return x + 359

def f360(x):
    return x + 360

def f361(x):
    return x + 361

def f362(x):
    return x + 362

def f363(x):
    return x + 363

def f364(x):
    return x + 364

def f365(x):
    return x + 365

def f366(x):
    return x + 366

def f367(x):
    return x + 367

def f368(x):
    return x + 368

def f369(x):
    return x + 369

def f370(x):
    return x + 370

def f371(x):
    return x + 371

def f372(x):
    return x + 372

def f373(x):
    return x + 373

def f374(x):
    return x + 374

def f375(x):
    return x + 375

def f376(x):
    return x + 376

def f377(x):
    return x + 377

def f378(x):
    return x + 378

def f379(x):
    return x + 379

def f380(x):
    return x + 380

def f381(x):
    return x + 381

def f382(x):
    return x + 382

def f383(x):
    return x + 383

def f384(x):
    return x + 384

def f385(x):
    return x + 385

def f386(x):
    return x + 386

def f387(x):
    return x + 387

def f388(x):
    return x + 388

def f389(x):
    return x + 389

def f390(x):
    return x + 390

def f391(x):
    return x + 391

def f392(x):
    return x + 392

def f393(x):
    return x + 393

def f394(x):
    return x + 394

def f395(x):
    return x + 395

def f396(x):
    return x + 396

def f397(x):
    return x + 397

def f398(x):
    return x + 398

def f399(x):
    return x + 399

def f400(x):
    return x + 400

def f401(x):
    return x + 401

def f402(x):
    return x + 402

def f403(x):
    return x + 403

def f404(x):
    return x + 404

def f405(x):
    return x + 405

def f406(x):
    return x + 406

def f407(x):
    return x + 407

def f408(x):
    return x + 408

def f409(x):
    return x + 409

def f410(x):
    return x + 410

def f411(x):
    return x + 411

def f412(x):
    return x + 412

def f413(x):
    return x + 413

def f414(x):
    return x + 414

def f415(x):
    return x + 415

def f416(x):
    return x + 416

def f417(x):
    return x + 417

def f418(x):
    return x + 418

def f419(x):
    return x + 419

def f420(x):
    return x + 420

def f421(x):
    return x + 421

def f422(x):
    return x + 422

def f423(x):
    return x + 423

def f424(x):
    return x + 424

def f425(x):
    return x + 425

def f426(x):
    return x + 426

def f427(x):
    return x + 427

def f428(x):
    return x + 428

def f429(x):
    return x + 429

def f430(x):
    return x + 430

def f431(x):
    return x + 431

def f432(x):
    return x + 432

def f433(x):
    return x + 433

def f434(x):
    return x + 434

def f435(x):
    return x + 435

def f436(x):
    return x + 436

def f437(x):
    return x + 437

def f438(x):
    return x + 438

def f439(x):
    return x + 439

def f440(x):
    return x + 440

def f441(x):
    return x + 441

def f442(x):
    return x + 442

def f443(x):
    return x + 443

def f444(x):
    return x + 444

def f445(x):
    return x + 445

def f446(x):
    return x + 446

def f447(x):
    return x + 447

def f448(x):
    return x + 448

def f449(x):
    return x + 449

def f450(x):
    return x + 450

def f451(x):
    return x + 451

def f452(x):
    return x + 452

def f453(x):
    return x + 453

def f454(x):
    return x + 454

def f455(x):
    return x + 455

def f456(x):
    return x + 456

def f457(x):
    return x + 457

def f458(x):
    return x + 458

def f459(x):
    return x + 459

def f460(x):
    return x + 460

def f461(x):
    return x + 461

def f462(x):
    return x + 462

def f463(x):
    return x + 463

def f464(x):
    return x + 464

def f465(x):
    return x + 465

def f466(x):
    return x + 466

def f467(x):
    return x + 467

def f468(x):
    return x + 468

def f469(x):
    return x + 469

def f470(x):
    return x + 470

def f471(x):
    return x + 471

def f472(x):
    return x + 472

def f473(x):
    return x + 473

def f474(x):
    return x + 474

def f475(x):
    return x + 475

def f476(x):
    return x + 476

def f477(x):
    return x + 477

def f478(x):
    return x + 478

def f479(x):
    return x + 479

def f480(x):
    return x + 480

def f481(x):
    return x + 481

def f482(x):
    return x + 482

def f483(x):
    return x + 483

def f484(x):
    return x + 484

def f485(x):
    return x + 485

def f486(x):
    return x + 486

def f487(x):
    return x + 487

def f488(x):
    return x + 488

def f489(x):
    return x + 489

def f490(x):
    return x + 490

def f491(x):
    return x + 491

def f492(x):
    return x + 492

def f493(x):
    return x + 493

def f494(x):
    return x + 494

def f495(x):
    return x + 495

def f496(x):
    return x + 496

def f497(x):
    return x + 497

def f498(x):
    return x + 498

def f499(x):
    return x + 499

def f500(x):
    return x + 500

def f501(x):
    return x + 501

def f502(x):
    return x + 502

def f503(x):
    return x + 503

def f504(x):
    return x + 504

def f505(x):
    return x + 505

def f506(x):
    return x + 506

def f507(x):
    return x + 507

def f508(x):
    return x + 508

def f509(x):
    return x + 509

def f510(x):
    return x + 510

def f511(x):
    return x + 511

def f512(x):
    return x + 512

def f513(x):
    return x + 513

def f514(x):
    return x + 514

def f515(x):
    return x + 515

def f516(x):
    return x + 516

def f517(x):
    return x + 517

def f518(x):
    return x + 518

def f519(x):
    return x + 519

def f520(x):
    return x + 520

def f521(x):
    return x + 521

def f522(x):
    return x + 522

def f523(x):
    return x + 523

def f524(x):
    return x + 524

def f525(x):
    return x + 525

def f526(x):
    return x + 526

def f527(x):
    return x + 527

def f528(x):
    return x + 528

def f529(x):
    return x + 529

def f530(x):
    return x + 530

def f531(x):
    return x + 531

def f532(x):
    return x + 532

def f533(x):
    return x + 533

def f534(x):
    return x + 534

def f535(x):
    return x + 535

def f536(x):
    return x + 536

def f537(x):
    return x + 537

def f538(x):
    return x + 538

def f539(x):
    return x + 539

def f540(x):
    return x + 540

def f541(x):
    return x + 541

def f542(x):
    return x + 542

def f543(x):
    return x + 543

def f544(x):
    return x + 544

def f545(x):
    return x + 545

def f546(x):
    return x + 546

def f547(x):
    return x + 547

def f548(x):
    return x + 548

def f549(x):
    return x + 549

def f550(x):
    return x + 550

def f551(x):
    return x + 551

def f552(x):
    return x + 552

def f553(x):
    return x + 553

def f554(x):
    return x + 554

def f555(x):
    return x + 555

def f556(x):
    return x + 556

def f557(x):
    return x + 557

def f558(x):
    return x + 558

def f559(x):
    return x + 559

def f560(x):
    return x + 560

def f561(x):
    return x + 561

def f562(x):
    return x + 562

def f563(x):
    return x + 563

def f564(x):
    return x + 564

def f565(x):
    return x + 565

def f566(x):
    return x + 566

def f567(x):
    return x + 567

def f568(x):
    return x + 568

def f569(x):
    return x + 569

def f570(x):
    return x + 570

def f571(x):
    return x + 571

def f572(x):
    return x + 572

def f573(x):
    return x + 573

def f574(x):
    return x + 574

def f575(x):
    return x + 575

def f576(x):
    return x + 576

def f577(x):
    return x + 577

def f578(x):
    return x + 578

def f579(x):
    return x + 579

def f580(x):
    return x + 580

def f581(x):
    return x + 581

def f582(x):
    return x + 582

def f583(x):
    return x + 583

def f584(x):
    return x + 584

def f585(x):
    return x + 585

def f586(x):
    return x + 586

def f587(x):
    return x + 587

def f588(x):
    return x + 588

def f589(x):
    return x + 589

def f590(x):
    return x + 590

def f591(x):
    return x + 591

def f592(x):
    return x + 592

def f593(x):
    return x + 593

def f594(x):
    return x + 594

def f595(x):
    return x + 595

def f596(x):
    return x + 596

def f597(x):
    return x + 597

def f598(x):
    return x + 598

def f599(x):
    return x + 599

def f600(x):
    return x + 600

def f601(x):
    return x + 601

def f602(x):
    return x + 602

def f603(x):
    return x + 603

def f604(x):
    return x + 604

def f605(x):
    return x + 605

def f606(x):
    return x + 606

def f607(x):
    return x + 607

def f608(x):
    return x + 608

def f609(x):
    return x + 609

def f610(x):
    return x + 610

def f611(x):
    return x + 611

def f612(x):
    return x + 612

def f613(x):
    return x + 613

def f614(x):
    return x + 614

def f615(x):
    return x + 615

def f616(x):
    return x + 616

def f617(x):
    return x + 617

def f618(x):
    return x + 618

def f619(x):
    return x + 619

def f620(x):
    return x + 620

def f621(x):
    return x + 621

def f622(x):
    return x + 622

def f623(x):
    return x + 623

def f624(x):
    return x + 624

def f625(x):
    return x + 625

def f626(x):
    return x + 626

def f627(x):
    return x + 627

def f628(x):
    return x + 628

def f629(x):
    return x + 629

def f630(x):
    return x + 630

def f631(x):
    return x + 631

def f632(x):
    return x + 632

def f633(x):
    return x + 633

def f634(x):
    return x + 634

def f635(x):
    return x + 635

def f636(x):
    return x + 636

def f637(x):
    return x + 637

def f638(x):
    return x + 638

def f639(x):
    return x + 639

def f640(x):
    return x + 640

def f641(x):
    return x + 641

def f642(x):
    return x + 642

def f643(x):
    return x + 643

def f644(x):
    return x + 644

def f645(x):
    return x + 645

def f646(x):
    return x + 646

def f647(x):
    return x + 647

def f648(x):
    return x + 648

def f649(x):
    return x + 649

def f650(x):
    return x + 650

def f651(x):
    return x + 651

def f652(x):
    return x + 652

def f653(x):
    return x + 653

def f654(x):
    return x + 654

def f655(x):
    return x + 655

def f656(x):
    return x + 656

def f657(x):
    return x + 657

def f658(x):
    return x + 658

def f659(x):
    return x + 659

def f660(x):
    return x + 660

def f661(x):
    return x + 661

def f662(x):
    return x + 662

def f663(x):
    return x + 663

def f664(x):
    return x + 664

def f665(x):
    return x + 665

def f666(x):
    return x + 666

def f667(x):
    return x + 667

def f668(x):
    return x + 668

def f669(x):
    return x + 669

def f670(x):
    return x + 670

def f671(x):
    return x + 671

def f672(x):
    return x + 672

def f673(x):
    return x + 673

def f674(x):
    return x + 674

def f675(x):
    return x + 675

def f676(x):
    return x + 676

def f677(x):
    return x + 677

def f678(x):
    return x + 678

def f679(x):
    return x + 679

def f680(x):
    return x + 680

def f681(x):
    return x + 681

def f682(x):
    return x + 682

def f683(x):
    return x + 683

def f684(x):
    return x + 684

def f685(x):
    return x + 685

def f686(x):
    return x + 686

def f687(x):
    return x + 687

def f688(x):
    return x + 688

def f689(x):
    return x + 689

def f690(x):
    return x + 690

def f691(x):
    return x + 691

def f692(x):
    return x + 692

def f693(x):
    return x + 693

def f694(x):
    return x + 694

def f695(x):
    return x + 695

def f696(x):
    return x + 696

def f697(x):
    return x + 697

def f698(x):
    return x + 698

def f699(x):
    return x + 699

def f700(x):
    return x + 700

def f701(x):
    return x + 701

def f702(x):
    return x + 702

def f703(x):
    return x + 703

def f704(x):
    return x + 704

def f705(x):
    return x + 705

def f706(x):
    return x + 706

def f707(x):
    return x + 707

def f708(x):
    return x + 708

def f709(x):
    return x + 709

def f710(x):
    return x + 710

def f711(x):
    return x + 711

def f712(x):
    return x + 712

def f713(x):
    return x + 713

def f714(x):
    return x + 714

def f715(x):
    return x + 715

def f716(x):
    return x + 716

def f717(x):
    return x + 717

def f718(x):
    return x + 718

def f719(x):
    return x + 719

def f720(x):
    return x + 720

def f721(x):
    return x + 721

def f722(x):
    return x + 722

def f723(x):
    return x + 723

def f724(x):
    return x + 724

def f725(x):
    return x + 725

def f726(x):
    return x + 726

def f727(x):
    return x + 727

def f728(x):
    return x + 728

def f729(x):
    return x + 729

def f730(x):
    return x + 730

def f731(x):
    return x + 731

def f732(x):
    return x + 732

def f733(x):
    return x + 733

def f734(x):
    return x + 734

def f735(x):
    return x + 735

def f736(x):
    return x + 736

def f737(x):
    return x + 737

def f738(x):
    return x + 738

def f739(x):
    return x + 739

def f740(x):
    return x + 740

def f741(x):
    return x + 741

def f742(x):
    return x + 742

def f743(x):
    return x + 743

def f744(x):
    return x + 744

def f745(x):
    return x + 745

def f746(x):
    return x + 746

def f747(x):
    return x + 747

def f748(x):
    return x + 748

def f749(x):
    return x + 749

def f750(x):
    return x + 750

def f751(x):
    return x + 751

def f752(x):
    return x + 752

def f753(x):
    return x + 753

def f754(x):
    return x + 754

def f755(x):
    return x + 755

def f756(x):
    return x + 756

def f757(x):
    return x + 757

def f758(x):
    return x + 758

def f759(x):
    return x + 759

def f760(x):
    return x + 760

def f761(x):
    return x + 761

def f762(x):
    return x + 762

def f763(x):
    return x + 763

def f764(x):
    return x + 764

def f765(x):
    return x + 765

def f766(x):
    return x + 766

def f767(x):
    return x + 767

def f768(x):
    return x + 768

def f769(x):
    return x + 769

def f770(x):
    return x + 770

def f771(x):
    return x + 771

def f772(x):
    return x + 772

def f773(x):
    return x + 773

def f774(x):
    return x + 774

def f775(x):
    return x + 775

def f776(x):
    return x + 776

def f777(x):
    return x + 777

def f778(x):
    return x + 778

def f779(x):
    return x + 779

def f780(x):
    return x + 780

def f781(x):
    return x + 781

def f782(x):
    return x + 782

def f783(x):
    return x + 783

def f784(x):
    return x + 784

def f785(x):
    return x + 785

def f786(x):
    return x + 786

def f787(x):
    return x + 787

def f788(x):
    return x + 788

def f789(x):
    return x + 789

def f790(x):
    return x + 790

def f791(x):
    return x + 791

def f792(x):
    return x + 792

def f793(x):
    return x + 793

def f794(x):
    return x + 794

def f795(x):
    return x + 795

def f796(x):
    return x + 796

def f797(x):
    return x + 797

def f798(x):
    return x + 798

def f799(x):
    return x + 799

def f800(x):
    return x + 800

def f801(x):
    return x + 801

def f802(x):
    return x + 802

def f803(x):
    return x + 803

def f804(x):
    return x + 804

def f805(x):
    return x + 805

def f806(x):
    return x + 806

def f807(x):
    return x + 807

def f808(x):
    return x + 808

def f809(x):
    return x + 809

def f810(x):
    return x + 810

def f811(x):
    return x + 811

def f812(x):
    return x + 812

def f813(x):
    return x + 813

def f814(x):
    return x + 814

def f815(x):
    return x + 815

def f816(x):
    return x + 816

def f817(x):
    return x + 817

def f818(x):
    return x + 818

def f819(x):
    return x + 819

def f820(x):
    return x + 820

def f821(x):
    return x + 821

def f822(x):
    return x + 822

def f823(x):
    return x + 823

def f824(x):
    return x + 824

def f825(x):
    return x + 825

def f826(x):
    return x + 826

def f827(x):
    return x + 827

def f828(x):
    return x + 828

def f829(x):
    return x + 829

def f830(x):
    return x + 830

def f831(x):
    return x + 831

def f832(x):
    return x + 832

def f833(x):
    return x + 833

def f834(x):
    return x + 834

def f835(x):
    return x + 835

def f836(x):
    return x + 836

def f837(x):
    return x + 837

def f838(x):
    return x + 838

def f839(x):
    return x + 839

def f840(x):
    return x + 840

def f841(x):
    return x + 841

def f842(x):
    return x + 842

def f843(x):
    return x + 843

def f844(x):
    return x + 844

def f845(x):
    return x + 845

def f846(x):
    return x + 846

def f847(x):
    return x + 847

def f848(x):
    return x + 848

def f849(x):
    return x + 849

def f850(x):
    return x + 850

def f851(x):
    return x + 851

def f852(x):
    return x + 852

def f853(x):
    return x + 853

def f854(x):
    return x + 854

def f855(x):
    return x + 855

def f856(x):
    return x + 856

def f857(x):
    return x + 857

def f858(x):
    return x + 858

def f859(x):
    return x + 859

def f860(x):
    return x + 860

def f861(x):
    return x + 861

def f862(x):
    return x + 862

def f863(x):
    return x + 863

def f864(x):
    return x + 864

def f865(x):
    return x + 865

def f866(x):
    return x + 866

def f867(x):
    return x + 867

def f868(x):
    return x + 868

def f869(x):
    return x + 869

def f870(x):
    return x + 870

def f871(x):
    return x + 871

def f872(x):
    return x + 872

def f873(x):
    return x + 873

def f874(x):
    return x + 874

def f875(x):
    return x + 875

def f876(x):
    return x + 876

def f877(x):
    return x + 877

def f878(x):
    return x + 878

def f879(x):
    return x + 879

def f880(x):
    return x + 880

def f881(x):
    return x + 881

def f882(x):
    return x + 882

def f883(x):
    return x + 883

def f884(x):
    return x + 884

def f885(x):
    return x + 885

def f886(x):
    return x + 886

def f887(x):
    return x + 887

def f888(x):
    return x + 888

def f889(x):
    return x + 889

def f890(x):
    return x + 890

def f891(x):
    return x + 891

def f892(x):
    return x + 892

def f893(x):
    return x + 893

def f894(x):
    return x + 894

def f895(x):
    return x + 895

def f896(x):
    return x + 896

def f897(x):
    return x + 897

def f898(x):
    return x + 898

def f899(x):
    return x + 899

def f900(x):
    return x + 900

def f901(x):
    return x + 901

def f902(x):
    return x + 902

def f903(x):
    return x + 903

def f904(x):
    return x + 904

def f905(x):
    return x + 905

def f906(x):
    return x + 906

def f907(x):
    return x + 907

def f908(x):
    return x + 908

def f909(x):
    return x + 909

def f910(x):
    return x + 910

def f911(x):
    return x + 911

def f912(x):
    return x + 912

def f913(x):
    return x + 913

def f914(x):
    return x + 914

def f915(x):
    return x + 915

def f916(x):
    return x + 916

def f917(x):
    return x + 917

def f918(x):
    return x + 918

def f919(x):
    return x + 919

def f920(x):
    return x + 920

def f921(x):
    return x + 921

def f922(x):
    return x + 922

def f923(x):
    return x + 923

def f924(x):
    return x + 924

def f925(x):
    return x + 925

def f926(x):
    return x + 926

def f927(x):
    return x + 927

def f928(x):
    return x + 928

def f929(x):
    return x + 929

def f930(x):
    return x + 930

def f931(x):
    return x + 931

def f932(x):
    return x + 932

def f933(x):
    return x + 933

def f934(x):
    return x + 934

def f935(x):
    return x + 935

def f936(x):
    return x + 936

def f937(x):
    return x + 937

def f938(x):
    return x + 938

def f939(x):
    return x + 939

def f940(x):
    return x + 940

def f941(x):
    return x + 941

def f942(x):
    return x + 942

def f943(x):
    return x + 943

def f944(x):
    return x + 944

def f945(x):
    return x + 945

def f946(x):
    return x + 946

def f947(x):
    return x + 947

def f948(x):
    return x + 948

def f949(x):
    return x + 949

def f950(x):
    return x + 950

def f951(x):
    return x + 951

def f952(x):
    return x + 952

def f953(x):
    return x + 953

def f954(x):
    return x + 954

def f955(x):
    return x + 955

def f956(x):
    return x + 956

def f957(x):
    return x + 957

def f958(x):
    return x + 958

def f959(x):
    return x + 959

def f960(x):
    return x + 960

def f961(x):
    return x + 961

def f962(x):
    return x + 962

def f963(x):
    return x + 963

def f964(x):
    return x + 964

def f965(x):
    return x + 965

def f966(x):
    return x + 966

def f967(x):
    return x + 967

def f968(x):
    return x + 968

def f969(x):
    return x + 969

def f970(x):
    return x + 970

def f971(x):
    return x + 971

def f972(x):
    return x + 972

def f973(x):
    return x + 973

def f974(x):
    return x + 974

def f975(x):
    return x + 975

def f976(x):
    return x + 976

def f977(x):
    return x + 977

def f978(x):
    return x + 978

def f979(x):
    return x + 979

def f980(x):
    return x + 980

def f981(x):
    return x + 981

def f982(x):
    return x + 982

def f983(x):
    return x + 983

def f984(x):
    return x + 984

def f985(x):
    return x + 985

def f986(x):
    return x + 986

def f987(x):
    return x + 987

def f988(x):
    return x + 988

def f989(x):
    return x + 989

def f990(x):
    return x + 990

def f991(x):
    return x + 991

def f992(x):
    return x + 992

def f993(x):
    return x + 993

def f994(x):
    return x + 994

def f995(x):
    return x + 995

def f996(x):
    return x + 996

def f997(x):
    return x + 997

def f998(x):
    return x + 998

def f999(x):
    return x + 999

def f1000(x):
    return x + 1000

def f1001(x):
    return x + 1001

def f1002(x):
    return x + 1002

def f1003(x):
    return x + 1003

def f1004(x):
    return x + 1004

def f1005(x):
    return x + 1005

def f1006(x):
    return x + 1006

def f1007(x):
    return x + 1007

def f1008(x):
    return x + 1008

def f1009(x):
    return x + 1009

def f1010(x):
    return x + 1010

def f1011(x):
    return x + 1011

def f1012(x):
    return x + 1012

def f1013(x):
    return x + 1013

def f1014(x):
    return x + 1014

def f1015(x):
    return x + 1015

def f1016(x):
    return x + 1016

def f1017(x):
    return x + 1017

def f1018(x):
    return x + 1018

def f1019(x):
    return x + 1019

def f1020(x):
    return x + 1020

def f1021(x):
    return x + 1021

def f1022(x):
    return x + 1022

def f1023(x):
    return x + 1023

def f1024(x):
    return x + 1024

def f1025(x):
    return x + 1025

def f1026(x):
    return x + 1026

def f1027(x):
    return x + 1027

def f1028(x):
    return x + 1028

def f1029(x):
    return x + 1029

def f1030(x):
    return x + 1030

def f1031(x):
    return x + 1031

def f1032(x):
    return x + 1032

def f1033(x):
    return x + 1033

def f1034(x):
    return x + 1034

def f1035(x):
    return x + 1035

def f1036(x):
    return x + 1036

def f1037(x):
    return x + 1037

def f1038(x):
    return x + 1038

def f1039(x):
    return x + 1039

def f1040(x):
    return x + 1040

def f1041(x):
    return x + 1041

def f1042(x):
    return x + 1042

def f1043(x):
    return x + 1043

def f1044(x):
    return x + 1044

def f1045(x):
    return x + 1045

def f1046(x):
    return x + 1046

def f1047(x):
    return x + 1047

def f1048(x):
    return x + 1048

def f1049(x):
    return x + 1049

def f1050(x):
    return x + 1050

def f1051(x):
    return x + 1051

def f1052(x):
    return x + 1052

def f1053(x):
    return x + 1053

def f1054(x):
    return x + 1054

def f1055(x):
    return x + 1055

def f1056(x):
    return x + 1056

def f1057(x):
    return x + 1057

def f1058(x):
    return x + 1058

def f1059(x):
    return x + 1059

def f1060(x):
    return x + 1060

def f1061(x):
    return x + 1061

def f1062(x):
    return x + 1062

def f1063(x):
    return x + 1063

def f1064(x):
    return x + 1064

def f1065(x):
    return x + 1065

def f1066(x):
    return x + 1066

def f1067(x):
    return x + 1067

def f1068(x):
    return x + 1068

def f1069(x):
    return x + 1069

def f1070(x):
    return x + 1070

def f1071(x):
    return x + 1071

def f1072(x):
    return x + 1072

def f1073(x):
    return x + 1073

def f1074(x):
    return x + 1074

def f1075(x):
    return x + 1075

def f1076(x):
    return x + 1076

def f1077(x):
    return x + 1077

def f1078(x):
    return x + 1078

def f1079(x):
    return x + 1079

def f1080(x):
    return x + 1080

def f1081(x):
    return x + 1081

def f1082(x):
    return x + 1082

def f1083(x):
    return x + 1083

def f1084(x):
    return x + 1084

def f1085(x):
    return x + 1085

def f1086(x):
    return x + 1086

def f1087(x):
    return x + 1087

def f1088(x):
    return x + 1088

def f1089(x):
    return x + 1089

def f1090(x):
    return x + 1090

def f1091(x):
    return x + 1091

def f1092(x):
    return x + 1092

def f1093(x):
    return x + 1093

def f1094(x):
    return x + 1094

def f1095(x):
    return x + 1095

def f1096(x):
    return x + 1096

def f1097(x):
    return x + 1097

def f1098(x):
    return x + 1098

def f1099(x):
    return x + 1099

def f1100(x):
    return x - 1100

def f1101(x):
    return x + 1101

def f1102(x):
    return x + 1102

def f1103(x):
    return x + 1103

def f1104(x):
    return x + 1104

def f1105(x):
    return x + 1105

def f1106(x):
    return x + 1106

def f1107(x):
    return x + 1107

def f1108(x):
    return x + 1108

def f1109(x):
    return x + 1109

def f1110(x):
    return x + 1110

def f1111(x):
    return x + 1111

def f1112(x):
    return x + 1112

def f1113(x):
    return x + 1113

def f1114(x):
    return x + 1114

def f1115(x):
    return x + 1115

def f1116(x):
    return x + 1116

def f1117(x):
    return x + 1117

def f1118(x):
    return x + 1118

def f1119(x):
    return x + 1119

def f1120(x):
    return x + 1120

def f1121(x):
    return x + 1121

def f1122(x):
    return x + 1122

def f1123(x):
    return x + 1123

def f1124(x):
    return x + 1124

def f1125(x):
    return x + 1125

def f1126(x):
    return x + 1126

def f1127(x):
    return x + 1127

def f1128(x):
    return x + 1128

def f1129(x):
    return x + 1129

def f1130(x):
    return x + 1130

def f1131(x):
    return x + 1131

def f1132(x):
    return x + 1132

def f1133(x):
    return x + 1133

def f1134(x):
    return x + 1134

def f1135(x):
    return x + 1135

def f1136(x):
    return x + 1136

def f1137(x):
    return x + 1137

def f1138(x):
    return x + 1138

def f1139(x):
    return x + 1139

def f1140(x):
    return x + 1140

def f1141(x):
    return x + 1141

def f1142(x):
    return x + 1142

def f1143(x):
    return x + 1143

def f1144(x):
    return x + 1144

def f1145(x):
    return x + 1145

def f1146(x):
    return x + 1146

def f1147(x):
    return x + 1147

def f1148(x):
    return x + 1148

def f1149(x):
    return x + 1149

def f1150(x):
    return x + 1150

def f1151(x):
    return x + 1151

def f1152(x):
    return x + 1152

def f1153(x):
    return x + 1153

def f1154(x):
    return x + 1154

def f1155(x):
    return x + 1155

def f1156(x):
    return x + 1156

def f1157(x):
    return x + 1157

def f1158(x):
    return x + 1158

def f1159(x):
    return x + 1159

def f1160(x):
    return x + 1160

def f1161(x):
    return x + 1161

def f1162(x):
    return x + 1162

def f1163(x):
    return x + 1163

def f1164(x):
    return x + 1164

def f1165(x):
    return x + 1165

def f1166(x):
    return x + 1166

def f1167(x):
    return x + 1167

def f1168(x):
    return x + 1168

def f1169(x):
    return x + 1169

def f1170(x):
    return x + 1170

def f1171(x):
    return x + 1171

def f1172(x):
    return x + 1172

def f1173(x):
    return x + 1173

def f1174(x):
    return x + 1174

def f1175(x):
    return x + 1175

def f1176(x):
    return x + 1176

def f1177(x):
    return x + 1177

def f1178(x):
    return x + 1178

def f1179(x):
    return x + 1179

def f1180(x):
    return x + 1180

def f1181(x):
    return x + 1181

def f1182(x):
    return x + 1182

def f1183(x):
    return x + 1183

def f1184(x):
    return x + 1184

def f1185(x):
    return x + 1185

def f1186(x):
    return x + 1186

def f1187(x):
    return x + 1187

def f1188(x):
    return x + 1188

def f1189(x):
    return x + 1189

def f1190(x):
    return x + 1190

def f1191(x):
    return x + 1191

def f1192(x):
    return x + 1192

def f1193(x):
    return x + 1193

def f1194(x):
    return x + 1194

def f1195(x):
    return x + 1195

def f1196(x):
    return x + 1196

def f1197(x):
    return x + 1197

def f1198(x):
    return x + 1198

def f1199(x):
    return x + 1199

